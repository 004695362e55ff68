package book

import (
	"bufio"
	"errors"
	"hash"
	"io"
	"sort"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// lineScanner reads a book one line at a time. It holds one line (at most
// MaxLineBytes+1 bytes of it) and never the whole book: a longer line is
// hashed as it is read, and handed on cut to MaxLineBytes+1 bytes with its
// leaf hash beside it, so that the checker still calls it too large and the
// top fingerprint is still the one of the whole text.
type lineScanner struct {
	br    *bufio.Reader
	bytes int64 // bytes read so far, line feeds included
	// leaf is the leaf hash of the line last returned when it was cut.
	leaf *[32]byte
	// lastEnd is bytes at the end of the line last returned.
	lastEnd int64
}

func newLineScanner(src io.Reader) *lineScanner {
	return &lineScanner{br: bufio.NewReaderSize(src, 1<<16)}
}

// next reads the next line, without its line feed, into dst's storage
// (dst[:0], grown as needed) and returns it, and whether a line feed ended
// it: the line is copied once, from the reader's buffer into dst. At the
// end it returns io.EOF and no line.
func (s *lineScanner) next(dst []byte) (line []byte, lf bool, err error) {
	s.leaf = nil
	line = dst[:0]
	var h hash.Hash
	for {
		chunk, rerr := s.br.ReadSlice('\n')
		s.bytes += int64(len(chunk))
		if rerr == nil {
			chunk = chunk[:len(chunk)-1]
			lf = true
		}
		switch {
		case h != nil:
			h.Write(chunk)
		case len(line)+len(chunk) > MaxLineBytes+1:
			hh := newLeafHash()
			hh.Write(line)
			hh.Write(chunk)
			h = hh
			line = append(line, chunk[:MaxLineBytes+1-len(line)]...)
		default:
			line = append(line, chunk...)
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if rerr != nil && rerr != io.EOF {
			return nil, false, rerr
		}
		if rerr == io.EOF && len(line) == 0 && h == nil && s.bytes == s.lastEnd {
			return line, false, io.EOF
		}
		s.lastEnd = s.bytes
		if h != nil {
			var leaf [32]byte
			h.Sum(leaf[:0])
			s.leaf = &leaf
		}
		return line, lf, nil
	}
}

// lateFinding is a breach settled after every stub was read (a period's
// total), with the index of the entry it belongs to.
type lateFinding struct {
	index   int
	finding Finding
}

// streamed is the checker's answer on a book read as a stream: the
// result without its entries (handed to the caller one by one), and the
// breaches settled at the end.
type streamed struct {
	res  Result
	late []lateFinding
	// lateProblems are problems found for an entry once a later line was
	// read (a seal's time-stamp covering an entry dated after it).
	lateProblems []lateFinding
}

// summaryAcc is the reference's summarise, worked out entry by entry.
type summaryAcc struct {
	any          bool
	problemFound bool
	skipped      bool
	missing      map[string]bool
	allCompared  bool
	firstBreach  *int
	counts       Counts
}

func (a *summaryAcc) add(r *reader, e *Entry) {
	p, sk, m, unc := r.facts(e)
	a.any = true
	a.problemFound = a.problemFound || p
	a.skipped = a.skipped || sk
	for _, x := range m {
		a.missing[x] = true
	}
	if unc {
		a.allCompared = false
	}
	if len(e.Breaches) > 0 {
		a.breachAt(e.Index)
	}
	countEntry(&a.counts, e)
}

func (a *summaryAcc) breachAt(i int) {
	if a.firstBreach == nil || i < *a.firstBreach {
		a.firstBreach = &i
	}
}

func (a *summaryAcc) summary(bookProblems []Finding) Summary {
	s := Summary{Counts: a.counts, MethodsMissing: []string{}}
	skipped := len(bookProblems) > 0 || !a.any || a.skipped
	for m := range a.missing {
		s.MethodsMissing = append(s.MethodsMissing, m)
	}
	sort.Strings(s.MethodsMissing)
	s.ProblemFound = a.problemFound || len(bookProblems) > 0
	s.FullyChecked = !skipped && len(a.missing) == 0
	s.Intact = !s.ProblemFound && s.FullyChecked
	s.FirstBreach = a.firstBreach
	s.WithinSlips = s.FirstBreach == nil && a.allCompared && !s.ProblemFound
	return s
}

// errStop ends a reading early without a fault.
var errStop = errors.New("stop reading")

// checkStream checks a book read from src line by line, handing each entry
// to each as it is read (with the breaches known then; the ones settled at
// the end come back in late). It holds one line at a time and, of the
// entries, only what the checker needs to read the next line. A book of
// more than MaxEntries lines is refused as a whole, as CheckBook refuses
// it: each has then been called for the lines before, and the caller
// drops what it kept. An error reading src is returned as it is.
func checkStream(src io.Reader, opts Options, each func(*Entry)) (streamed, error) {
	return checkStreamLines(src, opts, streamHooks{entry: each}, nil)
}

// streamHooks are what a check of a stream hands out as it reads; each is
// optional.
type streamHooks struct {
	entry func(*Entry)  // each entry as checked (checkStream)
	line  func([]byte)  // each line's text, before its entry
	file  fileEntryFunc // each entry as ReadEntries reads it, before it is checked
}

// fileEntryFunc takes an entry as ReadEntries hands it over. Its error
// stops the reading, and the reading returns it wrapped in a fileEntryErr.
type fileEntryFunc func(FileEntry) error

// fileEntryErr is the error of a fileEntryFunc, as a reading returns it.
type fileEntryErr struct{ err error }

func (e fileEntryErr) Error() string { return e.err.Error() }
func (e fileEntryErr) Unwrap() error { return e.err }

// checkStreamLines is checkStream with every hook. The lines are parsed on
// every core (parseLines); with a pool, the signatures are checked in it,
// each taken as valid meanwhile: the answer then holds only if
// pool.wait() says every one checked. With a file hook, a book of more
// than MaxEntries lines is still read to its end, to hand the hook every
// entry as ReadEntries would; the lines past MaxEntries are not checked.
func checkStreamLines(src io.Reader, opts Options, h streamHooks, pool *verifyPool) (streamed, error) {
	out := streamed{res: Result{Format: Format, Problems: []Finding{}, Notes: []string{}, Entries: []Entry{}}}
	r := newReader(opts, false)
	if pool != nil {
		r.verify = pool.verify
	}
	kb := newKeyBoard()
	acc := summaryAcc{missing: map[string]bool{}, allCompared: true}
	tooLarge := false
	lines := 0
	err := parseLines(src, 0, kb, opts, func(pl *parsedLine) error {
		switch {
		case pl.noLine:
			return nil
		case pl.ioErr != nil:
			return pl.ioErr
		}
		lines++
		if h.file != nil {
			if e, ok := pl.fileEntry(lines); ok {
				if err := h.file(e); err != nil {
					return fileEntryErr{err}
				}
			}
		}
		if r.size >= MaxEntries {
			tooLarge = true
			if h.file != nil {
				return nil
			}
			return errStop
		}
		if h.line != nil {
			h.line(pl.line)
		}
		r.leaf, r.line = &pl.leaf, pl
		e, _ := r.readValue(pl.line, pl.obj, pl.names, pl.err, false)
		r.line = nil
		kb.publish(r, &e)
		acc.add(r, &e)
		if h.entry != nil {
			h.entry(&e)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return out, err
	}
	if tooLarge {
		out.res.Problems = append(out.res.Problems, Finding{"too-large", "the book holds more than 100,000 entries"})
		out.res.Summary = (&summaryAcc{missing: map[string]bool{}, allCompared: true}).summary(out.res.Problems)
		return out, nil
	}
	if r.size == 0 {
		out.res.Problems = append(out.res.Problems, Finding{"not-json", "there is no record to check"})
		out.res.Summary = acc.summary(out.res.Problems)
		return out, nil
	}
	out.res.Size = r.size
	r.settlePeriods(func(i int, f Finding) {
		out.late = append(out.late, lateFinding{i, f})
		acc.breachAt(i)
	})
	root := r.tree.root()
	out.res.Root = canon.B64(root[:])
	switch {
	case opts.ExpectedRoot != "" && opts.ExpectedRoot != out.res.Root:
		out.res.Problems = append(out.res.Problems, Finding{"root-mismatch", "the top fingerprint is not the one expected"})
	case opts.ExpectedSize != nil && *opts.ExpectedSize != out.res.Size:
		out.res.Problems = append(out.res.Problems, Finding{"root-mismatch", "the number of entries is not the one expected"})
	}
	out.lateProblems = r.late
	if len(r.late) > 0 {
		acc.problemFound = true
	}
	out.res.Summary = acc.summary(out.res.Problems)
	r.sealSummary(&out.res.Summary)
	return out, nil
}
