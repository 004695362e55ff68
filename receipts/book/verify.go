package book

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
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
	// Sealed is how far the last counted time-stamp reaches (nil: no
	// stamp counts); Services, for each trusted service, the furthest its
	// own stamps reach; NotCounted, the sound stamps of services not named.
	Sealed     *Sealed          `json:"sealed"`
	Services   []ServiceSeal    `json:"services"`
	NotCounted []UncountedStamp `json:"notCounted"`
}

// VerifyFile checks the book at path, trusting the passkeys whose
// thumbprints are given. It fails only when the file cannot be read. It
// reads the book as a stream: its memory grows with the findings it
// reports, never with the number of entries.
func VerifyFile(path string, trust []string) (*Report, error) {
	return VerifyFileWith(path, Options{IssuerKeys: trust})
}

// VerifyFileWith is VerifyFile with every option of the checker: the
// expected recorders (SealKeys) and the trusted time-stamp services
// (StampServices) beside the passkeys.
func VerifyFileWith(path string, opts Options) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading book %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	rep, err := VerifyReader(f, opts, nil)
	if err != nil {
		return nil, fmt.Errorf("reading book %s: %w", path, err)
	}
	rep.Path = path
	return rep, nil
}

// VerifyFileEntries is VerifyFile handing each entry of the book to fn as
// it is read, in order, as ReadFileEntries does, from the one reading
// whose bytes the report is about: a caller that needs both the report
// and the entries reads the book once. Each entry is handed over once,
// before its line is checked; fn must not change it. fn's error stops the
// check and is returned as it is.
func VerifyFileEntries(path string, trust []string, fn func(FileEntry) error) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading book %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	rep, err := verifyStream(f, Options{IssuerKeys: trust}, streamHooks{file: fn})
	if fe, ok := errors.AsType[fileEntryErr](err); ok {
		return nil, fe.err
	}
	if err != nil {
		return nil, fmt.Errorf("reading book %s: %w", path, err)
	}
	rep.Path = path
	return rep, nil
}

// Verify checks a book's text and reports on it.
func Verify(text []byte, opts Options) *Report {
	rep, _ := VerifyReader(bytes.NewReader(text), opts, nil) // reading from memory never fails
	return rep
}

// VerifyReader checks the book read from src line by line and reports on
// it, handing each entry's line (without its line feed, valid only during
// the call) to each, when given, as it is read. It fails only when src
// cannot be read. The lines are parsed on every core; when src can be read
// again from its start (an io.Seeker) and each is nil, the signatures are
// checked on every core too, and should any not check, the book is read
// again checking each in its turn, so that the answer is the one a reading
// in order gives.
func VerifyReader(src io.Reader, opts Options, each func(line []byte)) (*Report, error) {
	return verifyStream(src, opts, streamHooks{line: each})
}

// verifyStream is VerifyReader with the hooks h. A file hook is called in
// the first reading only: should the book be read again (a signature did
// not check on the pool), its entries have been handed over already, and
// the second reading must find a problem too, or the book changed in
// between (CodeChangedWhileRead).
func verifyStream(src io.Reader, opts Options, h streamHooks) (*Report, error) {
	seeker, again := src.(io.Seeker)
	if !again || h.line != nil {
		return verifyReader(src, opts, h, nil)
	}
	start, err := seeker.Seek(0, io.SeekCurrent)
	if err != nil {
		return verifyReader(src, opts, h, nil)
	}
	pool := newVerifyPool()
	rep, err := verifyReader(src, opts, h, pool)
	if checked := pool.wait(); err != nil || checked {
		return rep, err
	}
	if _, err := seeker.Seek(start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading the book again from its start: %w", err)
	}
	readAgain()
	rep, err = verifyReader(src, opts, streamHooks{}, nil)
	if err == nil && h.file != nil && len(rep.Problems) == 0 {
		// A signature that did not check in the first reading finds no
		// problem in this one, which checks the same signature at the same
		// point: the book changed in between, and the entries handed over
		// came from the first reading.
		rep.Intact = false
		rep.Problems = append(rep.Problems, LineFinding{Line: 0, Code: CodeChangedWhileRead,
			Message: "the book changed while it was read: a signature that did not check in the first reading checked in the second; read it again"})
	}
	return rep, err
}

// CodeChangedWhileRead is the problem of a book that changed under
// VerifyFileEntries between its two readings.
const CodeChangedWhileRead = "changed-while-read"

// readAgain is called as a book is read a second time; tests count it.
var readAgain = func() {}

func verifyReader(src io.Reader, opts Options, h streamHooks, pool *verifyPool) (*Report, error) {
	var problems, breaches []LineFinding
	lines := func(e *Entry) {
		for _, p := range e.Problems {
			problems = append(problems, LineFinding{Line: e.Index + 1, Code: p.Code, Message: p.Message})
		}
		for _, b := range e.Breaches {
			breaches = append(breaches, LineFinding{Line: e.Index + 1, Code: b.Code, Message: b.Message})
		}
	}
	h.entry = lines
	out, err := checkStreamLines(src, opts, h, pool)
	if err != nil {
		return nil, err
	}
	res := out.res
	if res.Size == 0 {
		problems, breaches = nil, nil
	}
	for _, l := range out.late {
		breaches = append(breaches, LineFinding{Line: l.index + 1, Code: l.finding.Code, Message: l.finding.Message})
	}
	for _, l := range out.lateProblems {
		problems = append(problems, LineFinding{Line: l.index + 1, Code: l.finding.Code, Message: l.finding.Message})
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
	// The breaches settled at the end go after the entry's own, as
	// CheckBook puts them.
	sort.SliceStable(breaches, func(i, j int) bool { return breaches[i].Line < breaches[j].Line })
	rep := &Report{
		Intact: res.Summary.Intact, WithinSlips: res.Summary.WithinSlips, Size: res.Size, Root: res.Root,
		Counts: res.Summary.Counts, Problems: []LineFinding{}, Breaches: []LineFinding{}, Notes: []string{},
		Sealed: res.Summary.Sealed, Services: res.Summary.Services, NotCounted: res.Summary.NotCounted,
	}
	if rep.Services == nil {
		rep.Services = []ServiceSeal{}
	}
	if rep.NotCounted == nil {
		rep.NotCounted = []UncountedStamp{}
	}
	if res.Summary.Counts.Seals > 0 {
		if opts.SealKeys == nil {
			rep.Notes = append(rep.Notes, "no recorder was named (--sealer): the seals' keys were not compared with keys you trust")
		}
		switch {
		case rep.Sealed == nil && len(opts.StampServices) == 0:
			rep.Notes = append(rep.Notes, "no time-stamp service was named (--stamp-service): no time-stamp counts, and nothing here shows when the book was written")
		case rep.Sealed == nil:
			rep.Notes = append(rep.Notes, "no time-stamp from a service you named counts: nothing here shows when the book was written")
		default:
			rep.Notes = append(rep.Notes, fmt.Sprintf("the last counted time-stamp reaches line %d: the lines after it are not time-stamped, and the last seal with everything after it could have been removed unnoticed but for a copy held elsewhere", rep.Sealed.Entries))
		}
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
	if n := res.Size; n >= NearFull {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the book holds %d of the %d entries a book may hold: start a new book (a new slip) soon", n, MaxEntries))
	}
	rep.Problems = append(rep.Problems, problems...)
	rep.Breaches = append(rep.Breaches, breaches...)
	return rep, nil
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
	fmt.Fprintf(&b, "%d entries: %d slips, %d stubs (%d countersigned, %d one-sided, %d approved), %d refusals, %d cancellations, %d acknowledgements",
		r.Size, c.Slips, c.Stubs, c.Countersigned, c.OneSided, c.Approved, c.Refusals, c.Cancellations, c.Acknowledgements)
	if c.Seals > 0 {
		fmt.Fprintf(&b, ", %d seals", c.Seals)
	}
	if c.Passes > 0 {
		fmt.Fprintf(&b, ", %d passes", c.Passes)
	}
	b.WriteString("\n")
	if r.Root != "" {
		fmt.Fprintf(&b, "top fingerprint: %s\n", r.Root)
	}
	for _, s := range r.Services {
		fmt.Fprintf(&b, "sealed: the first %d entries existed by %s (service %s, the seal at line %d)\n", s.Entries, s.When, s.Service, s.Seal+1)
	}
	for _, s := range r.NotCounted {
		fmt.Fprintf(&b, "not counted: the time-stamp of %s on the seal at line %d, a service you did not name\n", s.Service, s.Seal+1)
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
