package book

import "bytes"

// CheckBook checks a whole book (the reference's checkBook, for the kinds
// this package reads). It never fails: a failed check is a normal answer.
// Entries are numbered from 0, as in the reference. It keeps every entry;
// [VerifyFile] and [VerifyReader] read a book of any size in flat memory.
// Signatures are checked on every core; should any not check, the book
// is read again checking each in its turn (see parseLines).
func CheckBook(text []byte, opts Options) Result {
	var entries []Entry
	collect := func(e *Entry) { entries = append(entries, *e) }
	pool := newVerifyPool()
	out, _ := checkStreamLines(bytes.NewReader(text), opts, streamHooks{entry: collect}, pool) // reading from memory never fails
	if !pool.wait() {
		entries = nil
		out, _ = checkStream(bytes.NewReader(text), opts, collect)
	}
	if out.res.Size == 0 {
		return out.res
	}
	for _, l := range out.late {
		e := &entries[l.index]
		e.Breaches = append(e.Breaches, l.finding)
	}
	for _, l := range out.lateProblems {
		e := &entries[l.index]
		e.Problems = append(e.Problems, l.finding)
		e.Verified = "none"
	}
	out.res.Entries = entries
	return out.res
}
