package report

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
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
	// Approvals are the approved stubs the copy does not back with an
	// answer that approved and a use by the stub's call
	// (copylog.ApprovalProblems); empty when all are backed.
	Approvals []string
}

// OK is true only where copy and book agree, the copy checks and the book
// has no problem.
func (r *CompareResult) OK() bool { return r.Report.OK() && len(r.Approvals) == 0 }

// CompareCopy holds the executor's copy against the book. It writes
// nothing and takes no lock, so it may run beside a running executor: the
// copy and the book are read line by line. The
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
	kopts, closeClients, errs := boot.Clients(set, log)
	defer closeClients()
	key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	if err != nil {
		if len(errs) > 0 {
			err = fmt.Errorf("%w (%w)", err, errs[0])
		}
		return nil, fmt.Errorf("the copy key must exist (compare makes none): %w", err)
	}
	res := &CompareResult{Copy: set.Executor.Copy, Book: bookPath}
	if res.BookCheck, err = book.VerifyFile(bookPath, set.Agent.IssuerKeys); err != nil {
		return nil, err
	}
	entries, err := bookEntries(bookPath)
	if err != nil {
		return nil, err
	}
	view := bookView(set.Service, res.BookCheck, entries)

	// The copy is read line by line; compare keeps a small record per call.
	side := copylog.NewCopySide()
	if err := copylog.ReadFileFunc(set.Executor.Copy, key, set.Name, func(ln copylog.Line) error {
		side.Add(ln)
		return nil
	}); err != nil {
		res.Report = copylog.CopyUnreadable(err, view)
		side = copylog.NewCopySide() // lines of a copy that does not verify count for nothing
	} else {
		res.Report = side.Compare(view)
		res.Approvals = side.ApprovalProblems(view)
	}
	res.Rules = rulesInRecords(view.Service, entries, side.DenialRules())
	return res, nil
}

// bookEntries reads the entries of the book file at path line by line
// (see book.ReadFileEntries), keeping of each only what compare uses: not
// its record or content, which hold the signatures.
func bookEntries(path string) ([]book.FileEntry, error) {
	var out []book.FileEntry
	err := book.ReadFileEntries(path, func(e book.FileEntry) error {
		e.Record, e.Content = nil, nil
		out = append(out, e)
		return nil
	})
	return out, err
}

// bookView is copylog's view of a checked book.
func bookView(service string, check *book.Report, entries []book.FileEntry) copylog.BookView {
	if service == "" {
		service = copylog.DefaultService
	}
	rulesStated := map[string]bool{}
	for _, e := range entries {
		if e.Kind == book.KindSlip {
			for _, sw := range e.Software {
				if strings.HasPrefix(sw.Name, receipt.RulesSoftwarePrefix) {
					rulesStated[e.Fingerprint] = true
				}
			}
		}
	}
	view := copylog.BookView{Service: service, Intact: check.Intact, Problems: len(check.Problems)}
	for _, e := range entries {
		var kind string
		switch e.Kind {
		case book.KindStub:
			kind = copylog.EntryStub
		case book.KindRefusal:
			kind = copylog.EntryRefusal
		default:
			continue
		}
		view.Entries = append(view.Entries, copylog.BookEntry{
			Line: e.Line, Kind: kind, Fingerprint: e.Fingerprint, With: e.With, Details: e.DetailsByName(),
			Slip: e.Slip, SlipStatesRules: rulesStated[e.Slip],
		})
	}
	return view
}

// rulesInRecords counts, for each rules fingerprint the executor's
// receipts (in the book) and denials (in the copy) name, how many name it,
// and says whether a slip in the book states it.
func rulesInRecords(service string, entries []book.FileEntry, denialRules map[string]int) []RulesUse {
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
		switch rules, _ := e.Detail(receipt.LabelRules); {
		case e.Kind == book.KindSlip:
			for _, sw := range e.Software {
				stated[sw.SHA256] = true
			}
		case e.Kind == book.KindStub && e.With == service && rules != "":
			use(rules).Receipts++
		}
	}
	for fp, n := range denialRules {
		use(fp).Denials += n
	}
	out := make([]RulesUse, 0, len(uses))
	for _, u := range uses {
		u.Stated = stated[u.SHA256]
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SHA256 < out[j].SHA256 })
	return out
}
