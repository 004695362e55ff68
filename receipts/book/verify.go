package book

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Report is what `mcp-executor verify BOOK --trust THUMBPRINT` says about
// a book: the checker's verdict, and every problem and breach with the
// line (counting from 1) it was found on; line 0 is the book as a whole.
type Report struct {
	Path        string        `json:"path"`
	Intact      bool          `json:"intact"`
	WithinSlips bool          `json:"withinSlips"`
	Size        int           `json:"size"`
	Root        string        `json:"root,omitempty"`
	Counts      Counts        `json:"counts"`
	Problems    []LineFinding `json:"problems"`
	Breaches    []LineFinding `json:"breaches"`
	Notes       []string      `json:"notes"`
}

// VerifyFile checks the book at path, trusting the passkeys whose
// thumbprints are given. It fails only when the file cannot be read.
func VerifyFile(path string, trust []string) (*Report, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading book %s: %w", path, err)
	}
	rep := Verify(text, Options{IssuerKeys: trust})
	rep.Path = path
	return rep, nil
}

// Verify checks a book's text and reports on it.
func Verify(text []byte, opts Options) *Report {
	res := CheckBook(text, opts)
	rep := &Report{
		Intact: res.Summary.Intact, WithinSlips: res.Summary.WithinSlips, Size: res.Size, Root: res.Root,
		Counts: res.Summary.Counts, Problems: []LineFinding{}, Breaches: []LineFinding{}, Notes: []string{},
	}
	for _, p := range res.Problems {
		rep.Problems = append(rep.Problems, LineFinding{Line: 0, Code: p.Code, Message: p.Message})
	}
	if len(opts.IssuerKeys) == 0 {
		rep.Notes = append(rep.Notes, "no trusted passkey was named: the slips' keys were not compared with a key you trust")
	}
	if !res.Summary.FullyChecked && len(res.Summary.MethodsMissing) > 0 {
		rep.Notes = append(rep.Notes, "signing methods this device could not check: "+strings.Join(res.Summary.MethodsMissing, ", "))
	}
	for _, e := range res.Entries {
		for _, p := range e.Problems {
			rep.Problems = append(rep.Problems, LineFinding{Line: e.Index + 1, Code: p.Code, Message: p.Message})
		}
		for _, b := range e.Breaches {
			rep.Breaches = append(rep.Breaches, LineFinding{Line: e.Index + 1, Code: b.Code, Message: b.Message})
		}
	}
	return rep
}

// ExitCode is the command's exit status: 0 when the book is intact and
// within its slips, 1 when anything is wrong.
func (r *Report) ExitCode() int {
	if r.Intact && r.WithinSlips {
		return 0
	}
	return 1
}

// Render writes the report for people: the verdict, then each problem and
// breach with its line.
func (r *Report) Render(w io.Writer) error {
	var b strings.Builder
	name := r.Path
	if name == "" {
		name = "the book"
	}
	verdict := "intact"
	if !r.Intact {
		verdict = "NOT intact"
	}
	within := "every stub is within its slip"
	if !r.WithinSlips {
		within = "NOT shown to be within its slips"
	}
	fmt.Fprintf(&b, "%s: %s; %s\n", name, verdict, within)
	c := r.Counts
	fmt.Fprintf(&b, "%d entries: %d slips, %d stubs (%d countersigned, %d one-sided, %d approved), %d refusals, %d cancellations, %d acknowledgements\n",
		r.Size, c.Slips, c.Stubs, c.Countersigned, c.OneSided, c.Approved, c.Refusals, c.Cancellations, c.Acknowledgements)
	if r.Root != "" {
		fmt.Fprintf(&b, "top fingerprint: %s\n", r.Root)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "problem %s: %s: %s\n", where(p.Line), p.Code, p.Message)
	}
	for _, x := range r.Breaches {
		fmt.Fprintf(&b, "breach %s: %s: %s\n", where(x.Line), x.Code, x.Message)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func where(line int) string {
	if line == 0 {
		return "in the book as a whole"
	}
	return fmt.Sprintf("at line %d", line)
}
