package book

import (
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// CheckBook checks a whole book (the reference's checkBook, for the kinds
// this package reads). It never fails: a failed check is a normal answer.
// Entries are numbered from 0, as in the reference.
func CheckBook(text []byte, opts Options) Result {
	res := Result{Format: Format, Problems: []Finding{}, Notes: []string{}, Entries: []Entry{}}
	r := newReader(opts, true)
	if len(text) == 0 {
		res.Problems = append(res.Problems, Finding{"not-json", "there is no record to check"})
		res.Summary = r.summarise(res.Entries, res.Problems)
		return res
	}
	r = readAll(text, opts, true)
	if r.failure != nil {
		res.Problems = append(res.Problems, *r.failure)
		res.Summary = r.summarise(res.Entries, res.Problems)
		return res
	}
	res.Size = r.size
	for _, st := range r.slipOrder {
		if st.rules != nil {
			settlePeriods(st.rules, st.tally, r.entries)
		}
	}
	for i := range r.entries {
		e := &r.entries[i]
		e.Breaches = append(e.Breaches, e.late...)
		e.late = nil
	}
	res.Entries = r.entries
	root := r.tree.root()
	res.Root = canon.B64(root[:])
	switch {
	case opts.ExpectedRoot != "" && opts.ExpectedRoot != res.Root:
		res.Problems = append(res.Problems, Finding{"root-mismatch", "the top fingerprint is not the one expected"})
	case opts.ExpectedSize != nil && *opts.ExpectedSize != res.Size:
		res.Problems = append(res.Problems, Finding{"root-mismatch", "the number of entries is not the one expected"})
	}
	res.Summary = r.summarise(res.Entries, res.Problems)
	return res
}
