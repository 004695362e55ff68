package copylog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Report is the outcome of Compare. Every list is present (empty, not
// null) in its JSON form.
type Report struct {
	Service string `json:"service"`
	// Calls is how many calls the copy shows as sent.
	Calls int `json:"calls"`
	// Denials is how many denial lines the copy holds; DenialsUnwritten of
	// them wrote no refusal because of the hourly cap.
	Denials          int `json:"denials"`
	DenialsUnwritten int `json:"denialsUnwritten"`
	// DenialsNotWritten are denials the book could not take: the refusal the
	// executor made is in no book. They make the report fail.
	DenialsNotWritten []DenialNotWritten `json:"denialsNotWritten"`

	// Matches lists the calls that matched when the comparison was asked
	// to list them (CompareOptions.ListMatches); MatchCount counts them
	// always.
	Matches            []Match              `json:"matches"`
	MatchCount         int                  `json:"-"`
	Differs            []Differ             `json:"differs"`
	Missing            []Missing            `json:"missing"`
	NotWritten         []NotWritten         `json:"notWritten"`
	SentWithoutReceipt []SentWithoutReceipt `json:"sentWithoutReceipt"`
	UnknownReceipts    []BookRef            `json:"unknownReceipts"`
	MissingDenials     []MissingDenial      `json:"missingDenials"`
	// WithoutRules lists the executor's receipts and denials under a slip
	// that states rules on content that name no rules file. It does not
	// change OK.
	WithoutRules []RulesMissing `json:"withoutRules"`

	// CopyError says why the copy could not be read ("" when it checked).
	CopyError    string `json:"copyError,omitempty"`
	BookIntact   bool   `json:"bookIntact"`
	BookProblems int    `json:"bookProblems"`
}

// DenialNotWritten is a refused call whose denial the book could not take.
type DenialNotWritten struct {
	Call   string `json:"call"`
	Reason string `json:"reason"` // the refusal's reason
	Why    string `json:"why"`    // why the book could not take it
}

// Match is a call whose receipt in the book is the one the copy names.
type Match struct {
	Call     string `json:"call"`
	Stub     string `json:"stub"`
	BookLine int    `json:"bookLine"`
	Late     bool   `json:"late,omitempty"` // written at a restart
}

// Differ is a receipt in the book for a call that is not the one the copy
// names.
type Differ struct {
	Call     string `json:"call"`
	CopyStub string `json:"copyStub"`
	BookStub string `json:"bookStub"`
	BookLine int    `json:"bookLine"`
}

// Missing is a call whose receipt the copy says was written and the book
// does not hold.
type Missing struct {
	Call string `json:"call"`
	Stub string `json:"stub"`
}

// NotWritten is a call whose outcome the copy holds but whose receipt the
// executor could not write to the book. BookStub names a stub the book
// holds for the call all the same, if any.
type NotWritten struct {
	Call     string `json:"call"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason"`
	BookStub string `json:"bookStub,omitempty"`
	BookLine int    `json:"bookLine,omitempty"`
}

// SentWithoutReceipt is a call the executor sent and never gave a receipt.
type SentWithoutReceipt struct {
	Call     string `json:"call"`
	Sent     string `json:"sent"`
	BookStub string `json:"bookStub,omitempty"`
	BookLine int    `json:"bookLine,omitempty"`
}

// BookRef is a stub in the book naming the executor that the copy does not
// know.
type BookRef struct {
	Line            int    `json:"bookLine"`
	Stub            string `json:"stub"`
	CallFingerprint string `json:"callFingerprint"` // "" when it names no executor.call
}

// MissingDenial is a denial whose refusal the book lacks.
type MissingDenial struct {
	Call    string `json:"call"`
	Refusal string `json:"refusal"`
	Reason  string `json:"reason"`
}

// RulesMissing is a receipt or denial that names no rules file under a slip
// that states rules on content.
type RulesMissing struct {
	Kind        string `json:"kind"` // EntryStub or EntryRefusal
	Call        string `json:"call"`
	Fingerprint string `json:"fingerprint"`
	BookLine    int    `json:"bookLine"`
}

func newReport(service string, book BookView) Report {
	return Report{
		Service:            service,
		Matches:            []Match{},
		Differs:            []Differ{},
		Missing:            []Missing{},
		NotWritten:         []NotWritten{},
		SentWithoutReceipt: []SentWithoutReceipt{},
		UnknownReceipts:    []BookRef{},
		MissingDenials:     []MissingDenial{},
		WithoutRules:       []RulesMissing{},
		BookIntact:         book.Intact,
		BookProblems:       book.Problems,
	}
}

// CopyUnreadable is the report for a copy that could not be read or did not
// check: it fails, and says why beside the book's state.
func CopyUnreadable(err error, book BookView) Report {
	service := book.Service
	if service == "" {
		service = DefaultService
	}
	r := newReport(service, book)
	r.CopyError = err.Error()
	return r
}

// OK is true only where copy and book agree on every call and denial, the
// copy checked and the book is intact with no problem. WithoutRules does
// not count.
func (r Report) OK() bool {
	return r.CopyError == "" && r.BookIntact && r.BookProblems == 0 &&
		len(r.Differs) == 0 && len(r.Missing) == 0 && len(r.NotWritten) == 0 &&
		len(r.SentWithoutReceipt) == 0 && len(r.UnknownReceipts) == 0 && len(r.MissingDenials) == 0 &&
		len(r.DenialsNotWritten) == 0
}

// Summary is the one line that opens the human report, for example
// "compare: FAIL 12 calls, 10 match, 1 missing, 1 differs; copy ok; book intact".
func (r Report) Summary() string {
	verdict := "OK"
	if !r.OK() {
		verdict = "FAIL"
	}
	parts := []string{calls(r.Calls), fmt.Sprintf("%d match", max(r.MatchCount, len(r.Matches)))}
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(len(r.Missing), "missing", "missing")
	add(len(r.Differs), "differs", "differ")
	add(len(r.NotWritten), "not written", "not written")
	add(len(r.SentWithoutReceipt), "sent without receipt", "sent without receipt")
	add(len(r.UnknownReceipts), "unknown receipt", "unknown receipts")
	add(len(r.MissingDenials), "denial missing", "denials missing")
	add(len(r.DenialsNotWritten), "denial not written", "denials not written")
	add(len(r.WithoutRules), "without rules", "without rules")
	copyState := "copy ok"
	if r.CopyError != "" {
		copyState = "copy unreadable"
	}
	bookState := "book intact"
	switch {
	case !r.BookIntact && r.BookProblems > 0:
		bookState = "book not intact, " + problems(r.BookProblems)
	case !r.BookIntact:
		bookState = "book not intact"
	case r.BookProblems > 0:
		bookState = "book has " + problems(r.BookProblems)
	}
	return fmt.Sprintf("compare: %s %s; %s; %s", verdict, strings.Join(parts, ", "), copyState, bookState)
}

func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}

func problems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return fmt.Sprintf("%d problems", n)
}

// WriteText writes the human report: the summary line, then one line per
// finding (matches are not listed), fit for a CronJob's log.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	if r.CopyError != "" {
		fmt.Fprintf(&b, "copy: %s\n", r.CopyError)
	}
	for _, d := range r.Differs {
		fmt.Fprintf(&b, "differs: call %s: the copy names stub %s, book line %d holds %s\n", d.Call, d.CopyStub, d.BookLine, d.BookStub)
	}
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "missing: call %s: stub %s is not in the book\n", m.Call, m.Stub)
	}
	for _, n := range r.NotWritten {
		fmt.Fprintf(&b, "not written: call %s: outcome %s known, the book could not be written: %s", n.Call, n.Outcome, n.Reason)
		if n.BookStub != "" {
			fmt.Fprintf(&b, " (book line %d holds stub %s for it)", n.BookLine, n.BookStub)
		}
		b.WriteByte('\n')
	}
	for _, s := range r.SentWithoutReceipt {
		fmt.Fprintf(&b, "sent without receipt: call %s sent %s", s.Call, s.Sent)
		if s.BookStub != "" {
			fmt.Fprintf(&b, " (book line %d holds stub %s for it)", s.BookLine, s.BookStub)
		}
		b.WriteByte('\n')
	}
	for _, u := range r.UnknownReceipts {
		if u.CallFingerprint == "" {
			fmt.Fprintf(&b, "unknown receipt: book line %d, stub %s names no executor.call\n", u.Line, u.Stub)
		} else {
			fmt.Fprintf(&b, "unknown receipt: book line %d, stub %s names a call the copy does not know (%s)\n", u.Line, u.Stub, u.CallFingerprint)
		}
	}
	for _, d := range r.MissingDenials {
		fmt.Fprintf(&b, "denial missing: call %s (%s): refusal %s is not in the book\n", d.Call, d.Reason, d.Refusal)
	}
	for _, d := range r.DenialsNotWritten {
		fmt.Fprintf(&b, "denial not written: call %s (%s): the book could not take it: %s\n", d.Call, d.Reason, d.Why)
	}
	for _, w := range r.WithoutRules {
		fmt.Fprintf(&b, "without rules: %s %s of call %s (book line %d) names no rules file under a slip that states rules\n", w.Kind, w.Fingerprint, w.Call, w.BookLine)
	}
	if r.DenialsUnwritten > 0 {
		fmt.Fprintf(&b, "note: %d of %d denials wrote no refusal (hourly cap)\n", r.DenialsUnwritten, r.Denials)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON is the report as indented JSON with "ok" added.
func (r Report) JSON() ([]byte, error) {
	type alias Report
	return json.MarshalIndent(struct {
		OK bool `json:"ok"`
		alias
	}{r.OK(), alias(r)}, "", "  ")
}
