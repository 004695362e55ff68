package copylog

// Book entry kinds a BookView holds.
const (
	EntryStub    = "stub"
	EntryRefusal = "refusal"
	// EntrySlip is a slip, only in a view read through BookView.Each: its
	// SlipStatesRules says whether the slip states rules on content, for the
	// stubs and refusals after it.
	EntrySlip = "slip"
)

// DefaultService is the executor's id in a slip's with when the settings
// name none.
const DefaultService = "executor"

// BookView is what Compare needs of a book, filled by the caller from a
// checked book. It holds fingerprints and labels only.
type BookView struct {
	// Service is the executor's id in the slip's with ("" means
	// DefaultService): stubs whose with names it are the executor's.
	Service string
	// Intact is whether the book could be read and checked to its end.
	Intact bool
	// Problems is how many problems the book's checker found.
	Problems int
	// Entries are the book's stubs and refusals, in book order.
	Entries []BookEntry
	// Each, when given, is used instead of Entries: it hands the book's
	// slips, stubs and refusals to fn in book order, one at a time, so that
	// the book need not be held (see [CompareLines]). Its error stops the
	// comparison.
	Each func(fn func(BookEntry) error) error
}

// BookEntry is one stub, refusal or (through BookView.Each) slip of the
// book.
type BookEntry struct {
	Line        int               // 1-based line number in the book
	Kind        string            // EntryStub, EntryRefusal or EntrySlip
	Fingerprint string            // the record's fingerprint
	With        string            // a stub's with ("" when none)
	Details     map[string]string // a stub's details: label -> sha256
	Slip        string            // the slip's fingerprint
	// SlipStatesRules is whether that slip states rules on content (an
	// agent.software entry named "Content rules of …"); for an EntrySlip,
	// whether this slip does. Through BookView.Each a stub or refusal may
	// leave it false: the slip entry before it says so.
	SlipStatesRules bool
}

// Compare holds the verified lines of a copy against a book and says where
// they disagree. A stub belongs to call C when it names the executor's
// service in with and its executor.call detail is canon.Fingerprint of C's
// text. It is [CompareLines] of the lines, listing every match.
func Compare(lines []Line, book BookView) Report {
	c, err := CompareLines(SliceLines(lines), book, CompareOptions{ListMatches: true})
	if err != nil { // only book.Each fails
		return CopyUnreadable(err, book)
	}
	return c.Report
}

// SliceLines is a LinesFunc over lines held in memory.
func SliceLines(lines []Line) LinesFunc {
	return func(fn func(Line) error) error {
		for _, ln := range lines {
			if err := fn(ln); err != nil {
				return err
			}
		}
		return nil
	}
}
