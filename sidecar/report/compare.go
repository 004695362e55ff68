package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
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
	// ListMatches lists every call that matched in Report.Matches (for
	// compare --json); memory then grows with the calls.
	ListMatches bool
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
// copy and the book are read line by line, and its memory is flat in the
// number of calls and entries (copylog.CompareLines) unless ListMatches
// asks for every match. The copy key must exist (compare makes none), and
// so must the book. An error means the comparison could not be made at
// all.
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
	if err := nothingRecordedYet(set.Executor.Copy, bookPath); err != nil {
		return nil, err
	}
	kopts, closeClients, errs := boot.Clients(set, log)
	defer closeClients()
	key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	if err != nil {
		if len(errs) > 0 {
			err = fmt.Errorf("%w (%w)", err, errs[0])
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the copy key must exist (compare makes none): %w", err)
		}
		return nil, fmt.Errorf("the copy key: %w", err)
	}
	return compareWithKey(set, key, bookPath, o.ListMatches)
}

// nothingRecordedYet says so when neither the copy nor the book is there:
// no executor has started with the settings. Still a failure of compare,
// which a CronJob runs to find what is missing; but it says which.
func nothingRecordedYet(copyPath, bookPath string) error {
	_, cerr := os.Stat(copyPath)
	_, berr := os.Stat(bookPath)
	if errors.Is(cerr, fs.ErrNotExist) && errors.Is(berr, fs.ErrNotExist) {
		return fmt.Errorf("nothing is recorded yet: neither the copy %s nor the book %s is there, so no executor has started with these settings "+
			"(its first start, mcp-executor stdio or serve, makes both)", copyPath, bookPath)
	}
	return nil
}

// compareWithKey holds the settings' copy, under key (already loaded),
// against the book at bookPath, checking the book as it goes.
func compareWithKey(set *settings.Settings, key []byte, bookPath string, listMatches bool) (*CompareResult, error) {
	return compareFiles(compareFilesIn{
		copyPath: set.Executor.Copy, key: key, name: set.Name, bookPath: bookPath, service: set.Service,
		trust: set.Agent.IssuerKeys, listMatches: listMatches,
	})
}

// compareFilesIn is what compareFiles reads: the copy, and the book with
// the passkeys its slips are checked against.
type compareFilesIn struct {
	copyPath    string
	key         []byte
	name        string
	bookPath    string
	service     string
	trust       []string
	listMatches bool
	// readBook reads and checks the book, handing fn its entries:
	// book.VerifyFileEntries when nil.
	readBook func(path string, trust []string, fn func(book.FileEntry) error) (*book.Report, error)
}

// compareFiles holds the copy against the book, reading each line by
// line: the copy first; then the book once, checked as it is read and its
// entries handed to the comparison from that same reading (so that the
// check's report and the comparison are about the same bytes, even beside
// an executor that appends); then the copy again, only for the texts of
// what it reports. A copy that does not verify is compared with nothing,
// and the book is still read, for its check and the rules its receipts
// name.
func compareFiles(in compareFilesIn) (*CompareResult, error) {
	res := &CompareResult{Copy: in.copyPath, Book: in.bookPath}
	service := in.service
	if service == "" {
		service = copylog.DefaultService
	}
	rules := newRulesAcc(service)
	view := copylog.BookView{Service: service}
	readBook := in.readBook
	if readBook == nil {
		readBook = book.VerifyFileEntries
	}
	view.Each = func(fn func(copylog.BookEntry) error) error {
		check, err := readBook(in.bookPath, in.trust, func(e book.FileEntry) error {
			rules.add(e)
			be, ok := bookEntry(e)
			if !ok {
				return nil
			}
			return fn(be)
		})
		res.BookCheck = check
		return err
	}
	c, err := copylog.CompareLines(copylog.FileLines(in.copyPath, in.key, in.name), view, copylog.CompareOptions{ListMatches: in.listMatches})
	if err != nil {
		return nil, err
	}
	if res.BookCheck == nil {
		// The copy did not verify, so the book was not read.
		if err := view.Each(func(copylog.BookEntry) error { return nil }); err != nil {
			return nil, err
		}
	}
	res.Report, res.Approvals = c.Report, c.Approvals
	// The book's state, known once it was read.
	res.Report.BookIntact, res.Report.BookProblems = res.BookCheck.Intact, len(res.BookCheck.Problems)
	res.Rules = rules.list(c.DenialRules)
	return res, nil
}

// bookEntry is copylog's view of one book entry: its slips (whether they
// state rules on content), stubs and refusals.
func bookEntry(e book.FileEntry) (copylog.BookEntry, bool) {
	switch e.Kind {
	case book.KindSlip:
		return copylog.BookEntry{Line: e.Line, Kind: copylog.EntrySlip, Fingerprint: e.Fingerprint, SlipStatesRules: statesRules(e)}, true
	case book.KindStub:
		return copylog.BookEntry{Line: e.Line, Kind: copylog.EntryStub, Fingerprint: e.Fingerprint, With: e.With, Details: e.DetailsByName(), Slip: e.Slip}, true
	case book.KindRefusal:
		return copylog.BookEntry{Line: e.Line, Kind: copylog.EntryRefusal, Fingerprint: e.Fingerprint, With: e.With, Details: e.DetailsByName(), Slip: e.Slip}, true
	}
	return copylog.BookEntry{}, false
}

// statesRules is whether a slip entry states rules on content.
func statesRules(e book.FileEntry) bool {
	for _, sw := range e.Software {
		if strings.HasPrefix(sw.Name, receipt.RulesSoftwarePrefix) {
			return true
		}
	}
	return false
}

// rulesAcc counts, entry by entry, the rules fingerprints the executor's
// receipts name, and the software fingerprints slips state.
type rulesAcc struct {
	service string
	uses    map[string]*RulesUse
	stated  map[string]bool
}

func newRulesAcc(service string) *rulesAcc {
	return &rulesAcc{service: service, uses: map[string]*RulesUse{}, stated: map[string]bool{}}
}

func (a *rulesAcc) use(fp string) *RulesUse {
	u := a.uses[fp]
	if u == nil {
		u = &RulesUse{SHA256: fp}
		a.uses[fp] = u
	}
	return u
}

func (a *rulesAcc) add(e book.FileEntry) {
	switch rules, _ := e.Detail(receipt.LabelRules); {
	case e.Kind == book.KindSlip:
		for _, sw := range e.Software {
			a.stated[sw.SHA256] = true
		}
	case e.Kind == book.KindStub && e.With == a.service && rules != "":
		a.use(rules).Receipts++
	}
}

// list adds the copy's denials by rules fingerprint and returns the uses
// sorted by fingerprint.
func (a *rulesAcc) list(denialRules map[string]int) []RulesUse {
	for fp, n := range denialRules {
		a.use(fp).Denials += n
	}
	out := make([]RulesUse, 0, len(a.uses))
	for _, u := range a.uses {
		u.Stated = a.stated[u.SHA256]
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SHA256 < out[j].SHA256 })
	return out
}

// rulesInRecords counts, for each rules fingerprint the executor's
// receipts (in the book) and denials (in the copy) name, how many name it,
// and says whether a slip in the book states it.
func rulesInRecords(service string, entries []book.FileEntry, denialRules map[string]int) []RulesUse {
	a := newRulesAcc(service)
	for _, e := range entries {
		a.add(e)
	}
	return a.list(denialRules)
}
