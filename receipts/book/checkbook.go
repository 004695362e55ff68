package book

import "bytes"

// CheckBook checks a whole book (the reference's checkBook, for the kinds
// this package reads). It never fails: a failed check is a normal answer.
// Entries are numbered from 0, as in the reference. It keeps every entry;
// [VerifyFile] and [VerifyReader] read a book of any size in flat memory.
func CheckBook(text []byte, opts Options) Result {
	var entries []Entry
	out, _ := checkStream(bytes.NewReader(text), opts, func(e *Entry) {
		entries = append(entries, *e)
	}) // reading from memory never fails
	if out.res.Size == 0 {
		return out.res
	}
	for _, l := range out.late {
		e := &entries[l.index]
		e.Breaches = append(e.Breaches, l.finding)
	}
	out.res.Entries = entries
	return out.res
}
