package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// CompareOptions say which executor's copy to compare, and with which book.
type CompareOptions struct {
	ConfigPath string
	BookPath   string       // "" = the settings' agent.book; else it must exist
	Logger     *slog.Logger // nil: discard
}

// RulesUse is one rules fingerprint the records name: how many of the
// executor's receipts in the book and denials in the copy name it, and
// whether a slip in the book states it (agent.software).
type RulesUse struct {
	SHA256   string `json:"sha256"`
	Receipts int    `json:"receipts"`
	Denials  int    `json:"denials"`
	Stated   bool   `json:"stated"`
}

// CompareResult is what compare found: copylog's report, the rules in the
// records and the book's own findings.
type CompareResult struct {
	Copy   string
	Book   string
	Report copylog.Report
	Rules  []RulesUse
	// BookCheck is the checker's report on the book (its problems give
	// Report.BookProblems).
	BookCheck *book.Report
}

// OK is true only where copy and book agree, the copy checks and the book
// has no problem.
func (r *CompareResult) OK() bool { return r.Report.OK() }

// CompareCopy holds the executor's copy against the book. It writes
// nothing and takes no lock, so it may run beside a running executor: the
// copy is read with copylog.ReadFile and the book with os.ReadFile. The
// copy key must exist (compare makes none), and so must the book. An error
// means the comparison could not be made at all.
func CompareCopy(ctx context.Context, o CompareOptions) (*CompareResult, error) {
	log := orDiscard(o.Logger)
	set, _, err := settings.Load(o.ConfigPath)
	if err != nil {
		return nil, err
	}
	bookPath := set.Agent.Book
	if o.BookPath != "" {
		bookPath = o.BookPath
	}
	kopts, closeClients, errs := inspectClients(set, log)
	defer closeClients()
	key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	if err != nil {
		if len(errs) > 0 {
			err = fmt.Errorf("%w (%v)", err, errs[0])
		}
		return nil, fmt.Errorf("the copy key must exist (compare makes none): %w", err)
	}
	text, err := os.ReadFile(bookPath)
	if err != nil {
		return nil, fmt.Errorf("reading book %s: %w", bookPath, err)
	}

	res := &CompareResult{Copy: set.Executor.Copy, Book: bookPath}
	res.BookCheck = book.Verify(text, book.Options{IssuerKeys: set.Agent.IssuerKeys})
	res.BookCheck.Path = bookPath
	entries := bookEntries(text)
	view := bookView(set.Service, res.BookCheck, entries)

	lines, err := copylog.ReadFile(set.Executor.Copy, key, set.Name)
	if err != nil {
		res.Report = copylog.CopyUnreadable(err, view)
	} else {
		res.Report = copylog.Compare(lines, view)
	}
	res.Rules = rulesInRecords(view.Service, entries, lines)
	return res, nil
}

// bookRecord is what compare and check read of one book line.
type bookRecord struct {
	line        int    // 1-based
	kind        string // "slip", "stub", "refusal" or "" (anything else)
	fingerprint string
	slip        string            // a stub's or refusal's slip
	with        string            // a stub's with
	details     map[string]string // a stub's details
	software    []slip.Software   // a slip's agent.software
}

// bookEntries reads the slips, stubs and refusals of a book, line by
// line. A line that cannot be read is left out: the checker reports it.
func bookEntries(text []byte) []bookRecord {
	var out []bookRecord
	n := 0
	for len(text) > 0 {
		n++
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		v, err := canon.Parse(line)
		if err != nil {
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if r, ok := readBookRecord(obj); ok {
			r.line = n
			out = append(out, r)
		}
	}
	return out
}

func readBookRecord(obj map[string]any) (bookRecord, bool) {
	switch {
	case obj["slip"] != nil:
		rec, err := record.Parse(obj["slip"], "slip")
		if err != nil {
			return bookRecord{}, false
		}
		r := bookRecord{kind: "slip", fingerprint: rec.Fingerprint}
		if sl, err := slip.Parse(rec.Content); err == nil {
			r.software = sl.Agent.Software
		}
		return r, true
	case obj["stub"] != nil:
		rec, err := record.Parse(obj["stub"], "stub")
		if err != nil {
			return bookRecord{}, false
		}
		r := bookRecord{kind: "stub", fingerprint: rec.Fingerprint, details: map[string]string{}}
		r.slip, _ = rec.Content["slip"].(string)
		r.with, _ = rec.Content["with"].(string)
		list, _ := rec.Content["details"].([]any)
		for _, d := range list {
			m, _ := d.(map[string]any)
			name, _ := m["name"].(string)
			sum, _ := m["sha256"].(string)
			if _, seen := r.details[name]; name != "" && !seen {
				r.details[name] = sum
			}
		}
		return r, true
	case obj["refusal"] != nil:
		rec, err := record.Parse(obj["refusal"], "refusal")
		if err != nil {
			return bookRecord{}, false
		}
		r := bookRecord{kind: "refusal", fingerprint: rec.Fingerprint}
		r.slip, _ = rec.Content["slip"].(string)
		return r, true
	}
	return bookRecord{}, false
}

// bookView is copylog's view of a checked book.
func bookView(service string, check *book.Report, entries []bookRecord) copylog.BookView {
	if service == "" {
		service = copylog.DefaultService
	}
	rulesStated := map[string]bool{}
	for _, e := range entries {
		if e.kind == "slip" {
			for _, sw := range e.software {
				if strings.HasPrefix(sw.Name, rulesSoftwarePrefix) {
					rulesStated[e.fingerprint] = true
				}
			}
		}
	}
	view := copylog.BookView{Service: service, Intact: check.Intact, Problems: len(check.Problems)}
	for _, e := range entries {
		var kind string
		switch e.kind {
		case "stub":
			kind = copylog.EntryStub
		case "refusal":
			kind = copylog.EntryRefusal
		default:
			continue
		}
		view.Entries = append(view.Entries, copylog.BookEntry{
			Line: e.line, Kind: kind, Fingerprint: e.fingerprint, With: e.with, Details: e.details,
			Slip: e.slip, SlipStatesRules: rulesStated[e.slip],
		})
	}
	return view
}

// rulesInRecords counts, for each rules fingerprint the executor's
// receipts (in the book) and denials (in the copy) name, how many name it,
// and says whether a slip in the book states it.
func rulesInRecords(service string, entries []bookRecord, lines []copylog.Line) []RulesUse {
	uses := map[string]*RulesUse{}
	use := func(fp string) *RulesUse {
		u := uses[fp]
		if u == nil {
			u = &RulesUse{SHA256: fp}
			uses[fp] = u
		}
		return u
	}
	stated := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.kind == "slip":
			for _, sw := range e.software {
				stated[sw.SHA256] = true
			}
		case e.kind == "stub" && e.with == service && e.details[receipt.LabelRules] != "":
			use(e.details[receipt.LabelRules]).Receipts++
		}
	}
	for _, ln := range lines {
		if ln.Kind == copylog.KindDenial && ln.Rules != "" {
			use(ln.Rules).Denials++
		}
	}
	out := make([]RulesUse, 0, len(uses))
	for _, u := range uses {
		u.Stated = stated[u.SHA256]
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SHA256 < out[j].SHA256 })
	return out
}
