package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/toolserver"
)

// Levels of a SetupItem.
const (
	LevelOK      = "ok"      // read and as it should be
	LevelNote    = "note"    // not there yet, and made at the first start; or more to know
	LevelWarning = "warning" // allowed, but unwise or likely not meant
	LevelProblem = "problem" // the executor would not start, or would refuse every call
)

// SetupItem is one thing check found: what, where, and how to fix it.
// No item holds a secret value.
type SetupItem struct {
	Level   string `json:"level"`
	What    string `json:"what"`
	Where   string `json:"where,omitempty"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// SetupReport is everything check found, in the order it was read.
type SetupReport struct {
	Settings string      `json:"settings"`
	Items    []SetupItem `json:"items"`
}

// Count is the number of items at level.
func (r *SetupReport) Count(level string) int {
	n := 0
	for _, it := range r.Items {
		if it.Level == level {
			n++
		}
	}
	return n
}

// OK reports a setup with no problem (warnings and notes allowed).
func (r *SetupReport) OK() bool { return r.Count(LevelProblem) == 0 }

func (r *SetupReport) add(level, what, where, msg, fix string) {
	r.Items = append(r.Items, SetupItem{Level: level, What: what, Where: where, Message: msg, Fix: fix})
}

// CheckOptions say what to check.
type CheckOptions struct {
	ConfigPath string
	Logger     *slog.Logger // the keys' warnings; nil: discard
	Now        time.Time    // zero: the time now
}

// maxListed is the most problems, or breaches, of the book check lists one
// by one; `verify` lists them all.
const maxListed = 20

// setupCheck is one run of CheckSetup.
type setupCheck struct {
	ctx      context.Context
	rep      *SetupReport
	set      *settings.Settings
	kopts    keys.Options
	log      *slog.Logger
	now      time.Time
	keysHint string

	agentFP, execFP string // public key-set fingerprints, when they loaded
	slip            *slip.Slip
	copyKey         []byte
	copyKeyMissing  bool
	// vaultDown, kubeDown: the Vault client could not be made or log in,
	// the Kubernetes client could not be made; the sources in that store
	// are not read (read through a client that failed, a source would say
	// its value is not there, or that the settings lack the store's block).
	vaultDown, kubeDown bool
}

// vaultUnread is the item of a source in a store whose client failed, or
// nil. (Named for the common case; Kubernetes Secrets too.)
func (c *setupCheck) vaultUnread(what, place, spec string) *SetupItem {
	var store string
	switch {
	case c.vaultDown && (strings.HasPrefix(spec, "vault:") || strings.HasPrefix(spec, "vault-transit:")):
		store = "the Vault client could not be made or log in (see above)"
	case c.kubeDown && strings.HasPrefix(spec, "secret:"):
		store = "the Kubernetes client could not be made (see above)"
	default:
		return nil
	}
	if place == "" {
		place = spec
	}
	return &SetupItem{Level: LevelProblem, What: what, Where: place, Message: spec + ": not read, as " + store,
		Fix: "put the store's block of the settings right; then check again"}
}

// CheckSetup reads the settings, every key, the copy and its key, the slip,
// the book, the server's credentials and the rules on content, and reports
// every problem it finds. It writes nothing: no key is made, nothing is
// added to the book, the copy is read without its lock. Each key source is
// reached (and said to be reached, and by which authentication), its value
// read and dropped.
func CheckSetup(ctx context.Context, o CheckOptions) *SetupReport {
	log := orDiscard(o.Logger)
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	rep := &SetupReport{Settings: o.ConfigPath, Items: []SetupItem{}}
	set, warnings, err := settings.Load(o.ConfigPath)
	if err != nil {
		rep.add(LevelProblem, "settings", o.ConfigPath, err.Error(), "correct the settings file at the place named; nothing else can be checked until it reads")
		return rep
	}
	rep.Settings = set.File
	rep.add(LevelOK, "settings", set.File, fmt.Sprintf("read: executor %q, service id %q, %s", set.Name, set.Service, countOf(len(set.ToolOrder), "tool")), "")
	for _, w := range warnings {
		rep.add(LevelWarning, "settings", w.Place, w.Message, "")
	}

	c := &setupCheck{ctx: ctx, rep: rep, set: set, log: log, now: now,
		keysHint: fmt.Sprintf("run `mcp-executor keys --config %s` to make it", set.File)}
	var closeClients func()
	var errs []error
	c.kopts, closeClients, errs = boot.Clients(set, log)
	defer closeClients()
	for _, e := range errs {
		rep.add(LevelProblem, "key store", "", e.Error(), "correct the vault or kubernetes block of the settings; the sources it holds cannot be reached")
	}
	c.vaultDown = set.Vault != nil && c.kopts.Vault == nil
	c.kubeDown = set.Kubernetes != nil && c.kopts.Kube == nil
	c.vault()
	c.agentFP = c.keySet("agent keys", "agent.keys", set.Agent.Keys)
	c.execFP = c.keySet("executor keys", "executor.keys", set.Executor.Keys)
	c.copyKeyAndCopy()
	c.approvalQueue()
	c.checkSlip()
	c.contentRules()
	c.checkBook()
	c.servers()
	return rep
}

// approvalQueue warns of a queue folder others than the executor may
// write: its files approve held calls.
func (c *setupCheck) approvalQueue() {
	dir := c.set.Approvals.Queue
	if risk := approval.FolderRisk(dir); risk != "" {
		c.rep.add(LevelWarning, "approval queue", "approvals.queue "+dir, risk, approval.FolderRiskFix(dir))
	}
}

// vault logs in once, so that a wrong role or token shows here apart from
// any source.
func (c *setupCheck) vault() {
	v := c.kopts.Vault
	if v == nil {
		return
	}
	if err := v.Login(c.ctx); err != nil {
		c.vaultDown = true
		c.rep.add(LevelProblem, "vault", v.Address(), fmt.Sprintf("could not log in by %s: %v", v.AuthMethod(), err),
			"check the vault block of the settings (address, CA file, auth) and that Vault is reachable from here")
		return
	}
	c.rep.add(LevelOK, "vault", v.Address(), "reached; logged in by "+v.AuthMethod(), "")
}

// source reports one source of a secret. It returns whether its value is
// there and read.
func (c *setupCheck) source(what, place string, st keys.SourceStatus, missingFix string) bool {
	if it := c.vaultUnread(what, place, st.Source); it != nil {
		c.rep.Items = append(c.rep.Items, *it)
		return false
	}
	it := sourceItem(what, place, st, missingFix)
	c.rep.Items = append(c.rep.Items, it)
	return it.Level == LevelOK
}

// sourceItem is what check says of one source of a secret: ok when its
// value is there and read, a problem otherwise.
func sourceItem(what, place string, st keys.SourceStatus, missingFix string) SetupItem {
	where := place
	if where == "" {
		where = st.Source
	}
	describe := st.Where
	if describe == "" {
		describe = st.Source
	}
	// A file or a variable is simply there or not; a store is reached first.
	remote := st.Auth != "" && st.Auth != "file" && st.Auth != "environment"
	how := ""
	switch {
	case remote && st.Reached:
		how = "reached by " + st.Auth + "; "
	case remote:
		how = "not reached (" + st.Auth + "); "
	}
	if st.Present {
		msg := describe + ": " + how + "present"
		if st.Note != "" {
			msg += "; " + st.Note
		}
		return SetupItem{Level: LevelOK, What: what, Where: where, Message: msg}
	}
	fix := "check that the store can be reached from here and that the executor's credentials may read it"
	msg := describe + ": " + how
	switch {
	case errors.Is(st.Err, fs.ErrNotExist):
		fix = missingFix
		msg += "not there"
	case st.Where == "":
		fix = "correct the source in the settings"
		msg += st.Err.Error()
	case errors.Is(st.Err, fs.ErrPermission):
		fix = "let the executor's user read it"
		msg += st.Err.Error()
	case st.Err != nil && !remote:
		fix = "put it right as said"
		msg += st.Err.Error()
	case st.Err != nil:
		msg += st.Err.Error()
	}
	return SetupItem{Level: LevelProblem, What: what, Where: where, Message: msg, Fix: fix}
}

// keySet checks one key set and returns its public fingerprint ("" when it
// did not load). Nothing is made.
func (c *setupCheck) keySet(what, place string, ks settings.KeySource) string {
	spec := boot.KeySetSpec(ks)
	st := keys.CheckKeySet(c.ctx, spec, c.set.Dir, c.kopts)
	allThere := true
	for i, s := range st.Sources {
		p := place
		if spec.MLDSA != "" {
			p += []string{".ed25519", ".mldsa87"}[min(i, 1)]
		}
		allThere = c.source(what, p, s, c.keysHint) && allThere
	}
	if st.Err != nil {
		if allThere {
			c.rep.add(LevelProblem, what, place, st.Err.Error(), "correct the key set at its source, or name another in the settings")
		}
		return ""
	}
	msg := "key set " + st.Fingerprint + " (Ed25519 and ML-DSA-87)"
	if st.Transit {
		msg += "; the Ed25519 half signs in Vault Transit, the ML-DSA-87 half comes from a secret (open-source Vault's Transit has no ML-DSA keys)"
	}
	c.rep.add(LevelOK, what, place, msg, "")
	return st.Fingerprint
}

func (c *setupCheck) copyKeyAndCopy() {
	set := c.set
	copyPath := set.Executor.Copy
	copyHolds := false
	info, statErr := os.Stat(copyPath)
	if statErr == nil {
		copyHolds = info.Size() > 0
	}

	st := keys.CheckSource(c.ctx, set.Executor.CopyKey, set.Dir, c.kopts)
	vu := c.vaultUnread("copy key", "executor.copyKey", set.Executor.CopyKey)
	switch {
	case vu != nil:
		c.rep.Items = append(c.rep.Items, *vu)
	case st.Present:
		key, err := keys.LoadCopyKey(c.ctx, set.Executor.CopyKey, set.Dir, c.kopts)
		if err != nil {
			c.rep.add(LevelProblem, "copy key", "executor.copyKey", err.Error(), "the copy key is 32 bytes in base64url (43 characters); restore the right one")
			break
		}
		c.copyKey = key
		c.source("copy key", "executor.copyKey", st, "")
	case errors.Is(st.Err, fs.ErrNotExist) && !copyHolds:
		c.copyKeyMissing = true
		c.rep.add(LevelNote, "copy key", "executor.copyKey", st.Where+": not there yet; the first start (or `mcp-executor keys`) makes it", "")
	default:
		fix := c.keysHint
		if copyHolds {
			fix = "the copy holds lines: restore the copy key it was written under (a new key cannot read them)"
		}
		c.source("copy key", "executor.copyKey", st, fix)
	}

	switch {
	case statErr != nil && errors.Is(statErr, fs.ErrNotExist):
		dir := filepath.Dir(copyPath)
		if d, err := os.Stat(dir); err != nil || !d.IsDir() {
			c.rep.add(LevelProblem, "copy", "executor.copy "+copyPath, "its folder "+dir+" is not there", "make the folder, writable by the executor's user alone")
			return
		}
		c.rep.add(LevelNote, "copy", "executor.copy "+copyPath, "not there yet; the first start makes it", "")
	case statErr != nil:
		c.rep.add(LevelProblem, "copy", "executor.copy "+copyPath, statErr.Error(), "let the executor's user read and write it")
	case c.copyKey == nil && copyHolds:
		// Already reported with the key.
	case c.copyKey == nil:
		c.rep.add(LevelNote, "copy", "executor.copy "+copyPath, "empty", "")
	default:
		lines, unfinished, err := copylog.ReadUnfinished(copyPath, c.copyKey, set.Name)
		if err != nil {
			c.rep.add(LevelProblem, "copy", "executor.copy "+copyPath, err.Error(), copyFix(err))
			return
		}
		msg := fmt.Sprintf("%d lines check under the copy key and run in sequence", lines)
		if n := len(unfinished); n > 0 {
			msg += fmt.Sprintf("; %d calls were being sent when the executor stopped: the next start writes their receipts", n)
		}
		c.rep.add(LevelOK, "copy", "executor.copy "+copyPath, msg, "")
	}
}

func copyFix(err error) string {
	switch {
	case errors.Is(err, copylog.ErrWrongKey):
		return "name the copy key this copy was written under"
	case errors.Is(err, copylog.ErrOtherExecutor):
		return "the copy belongs to an executor of another name: correct name, or executor.copy"
	case errors.Is(err, copylog.ErrCutLine):
		return "a stop cut the last line while it was written (never acknowledged): the executor's next start keeps it aside in COPY.torn-<time> and goes on"
	case errors.Is(err, copylog.ErrTampered):
		return "the copy was changed: keep it as evidence, move it aside and start a new one"
	}
	return "let the executor's user read the copy"
}

func (c *setupCheck) checkSlip() {
	set := c.set
	where := "agent.slip " + set.Agent.Slip
	if len(set.Agent.IssuerKeys) == 0 {
		c.rep.add(LevelProblem, "trusted passkeys", "agent.issuerKeys", "not given, so the executor trusts no passkey and will not start: it acts only under a slip signed by a passkey named there",
			strings.Replace(settings.NoPasskeyFix, "FILE", set.File, 1))
	}
	v, err := boot.ReadSlipFile(set.Agent.Slip)
	if err != nil {
		fix := "save the slip in the right form (a slip's JSON as signed)"
		if errors.Is(err, fs.ErrNotExist) {
			fix = "have the person sign the permission (with what `mcp-executor keys` prints) and save it here"
		}
		c.rep.add(LevelProblem, "slip", where, err.Error(), fix)
		return
	}
	opts := slip.Options{IssuerKeys: set.Agent.IssuerKeys}
	if opts.IssuerKeys == nil {
		opts.IssuerKeys = []string{}
	}
	sl, res := slip.Check(v, opts)
	for _, p := range res.Problems {
		fix := "have the person sign the permission again and save it here"
		if p.Code == "issuer-not-expected" {
			fix = fmt.Sprintf("the slip is signed by passkey %s: put its thumbprint into agent.issuerKeys if you trust it, or have a trusted passkey sign", res.IssuerKey)
		}
		c.rep.add(LevelProblem, "slip", where, fmt.Sprintf("%s: %s", p.Code, p.Message), fix)
	}
	if len(res.Problems) == 0 && res.Signature.State != slip.StateValid {
		c.rep.add(LevelProblem, "slip", where, "its signature could not be checked here ("+res.Signature.State+")",
			"have the person sign with a passkey of a method this executor checks (ES256, RS256, Ed25519)")
	}
	if sl == nil {
		return
	}
	if res.Sound() {
		c.slip = sl
		c.rep.add(LevelOK, "slip", where, fmt.Sprintf("%s signed by trusted passkey %s; valid %s to %s", sl.Fingerprint, res.IssuerKey,
			canon.FormatTime(sl.ValidFrom), canon.FormatTime(sl.ValidUntil)), "")
	}

	c.slipKeys(sl, where)
	c.slipTerms(sl, where)
}

// slipKeys compares the slip's agent keys and its with entry for the
// service with the key sets held.
func (c *setupCheck) slipKeys(sl *slip.Slip, where string) {
	set := c.set
	switch {
	case c.agentFP == "":
		c.rep.add(LevelNote, "slip", where, "its agent keys were not compared: the agent keys did not load", "")
	case sl.Agent.Keys.Fingerprint() != c.agentFP:
		c.rep.add(LevelProblem, "slip", where, "it is for other agent keys than the ones agent.keys holds",
			"have the person sign a permission with the agent keys `mcp-executor keys` prints, or point agent.keys at the keys the slip names")
	default:
		c.rep.add(LevelOK, "slip", where, "its agent.keys are the agent keys held", "")
	}
	svc, found := sl.Service(set.Service)
	switch {
	case !found:
		c.rep.add(LevelProblem, "slip", where, fmt.Sprintf("its with names no service %q (the settings' service)", set.Service),
			"have the person sign a permission whose with holds the entry `mcp-executor keys` prints, or set service to the id the slip uses")
	case svc.Keys == nil:
		c.rep.add(LevelProblem, "slip", where, fmt.Sprintf("its with entry %q holds no keys, so the executor cannot countersign", set.Service),
			"have the person sign a permission whose with entry holds the executor keys `mcp-executor keys` prints")
	case c.execFP == "":
		c.rep.add(LevelNote, "slip", where, "its with entry was not compared: the executor keys did not load", "")
	case svc.Keys.Fingerprint() != c.execFP:
		c.rep.add(LevelProblem, "slip", where, fmt.Sprintf("its with entry %q holds other keys than executor.keys", set.Service),
			"have the person sign a permission with the with entry `mcp-executor keys` prints, or point executor.keys at the keys the slip names")
	default:
		c.rep.add(LevelOK, "slip", where, fmt.Sprintf("its with entry %q holds the executor keys", set.Service), "")
	}
}

// slipTerms warns of a slip that does not ask for the countersignature,
// is outside its valid time, or does not allow a tool's action.
func (c *setupCheck) slipTerms(sl *slip.Slip, where string) {
	set := c.set
	countersigned := false
	for _, r := range sl.Requires {
		countersigned = countersigned || (r.Need == "countersignature" && r.Action == "" && r.Above == nil)
	}
	if !countersigned {
		c.rep.add(LevelWarning, "slip", where, "its requires does not hold {\"need\":\"countersignature\"}: a stub without the executor's countersignature is then no finding",
			"have the person add {\"need\":\"countersignature\"} to requires")
	}
	switch {
	case !c.now.Before(sl.ValidUntil):
		c.rep.add(LevelProblem, "slip", where, "its valid time ended at "+canon.FormatTime(sl.ValidUntil)+": every call would be refused",
			"have the person sign a new permission")
	case c.now.Before(sl.ValidFrom):
		c.rep.add(LevelWarning, "slip", where, "it is valid only from "+canon.FormatTime(sl.ValidFrom)+": calls before then are refused", "")
	}
	// A tool whose action the slip does not allow is refused (not-in-slip)
	// by the person's choice, which may well be meant (a tool one may
	// not use): a note, not a warning. A rule that refuses asks the slip
	// nothing.
	for _, name := range set.ToolOrder {
		if t := set.Tools[name]; !t.Refuse && !sl.Allows(t.Action) {
			c.rep.add(LevelNote, "tools", settings.Place("tools", name)+".action", fmt.Sprintf("the slip does not allow the action %q: calls to this tool are refused (not-in-slip)", t.Action),
				"if they should not be, correct the action or have the person allow it")
		}
	}
}

func (c *setupCheck) contentRules() {
	set := c.set
	if set.ContentRules == "" {
		if c.slip != nil {
			if err := boot.NoRulesStated(c.slip); err != nil {
				c.rep.add(LevelProblem, "content rules", "contentRules", err.Error(), "name the rules file the person approved in contentRules")
			}
		}
		return
	}
	where := "contentRules " + set.ContentRules
	rs, err := contentrules.Load(set.ContentRules)
	if err != nil {
		c.rep.add(LevelProblem, "content rules", where, err.Error(), "correct the rules file at the place named")
		return
	}
	c.rep.add(LevelOK, "content rules", where, fmt.Sprintf("%d rules read; fingerprint %s", len(rs.Rules()), rs.Fingerprint()), "")
	if c.slip != nil {
		stated := false
		for _, sw := range c.slip.Agent.Software {
			stated = stated || sw.SHA256 == rs.Fingerprint()
		}
		switch err := boot.RulesApproved(c.slip, rs.Fingerprint()); {
		case err != nil:
			c.rep.add(LevelProblem, "content rules", where, err.Error(),
				"name the rules file the slip states, or have the person sign a permission stating these rules (`mcp-executor keys` prints the entry)")
		case !stated:
			c.rep.add(LevelWarning, "content rules", where, "the slip does not state these rules (agent.software): a reader cannot tell they are the ones the person approved",
				"have the person put the entry `mcp-executor keys` prints into agent.software")
		default:
			c.rep.add(LevelOK, "content rules", where, "the slip states these rules in agent.software", "")
		}
	}
	for _, tool := range rs.Tools() {
		if _, ok := set.Tools[tool]; ok {
			continue
		}
		if set.Unlisted == settings.UnlistedForward {
			c.rep.add(LevelProblem, "content rules", where, fmt.Sprintf("a rule names the tool %q, which no rule in tools names, and unlisted is forward: a call to it would be sent on with no content rule tested", tool),
				"add the tool to tools, or set unlisted to refuse")
			continue
		}
		c.rep.add(LevelWarning, "content rules", where, fmt.Sprintf("a rule names the tool %q, which no rule in tools names: such a call is refused as unlisted before any content rule", tool), "")
	}
}

// verifyBookFile is book.VerifyFileEntries; the near-full test puts a
// report of a larger size in its place.
var verifyBookFile = book.VerifyFileEntries

func (c *setupCheck) checkBook() {
	set := c.set
	where := "agent.book " + set.Agent.Book
	_, err := os.Stat(set.Agent.Book)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(set.Agent.Book)
		if d, err := os.Stat(dir); err != nil || !d.IsDir() {
			c.rep.add(LevelProblem, "book", where, "its folder "+dir+" is not there", "make the folder, writable by the executor's user")
			return
		}
		c.rep.add(LevelNote, "book", where, "not there yet; the first start makes it and writes the slip into it", "")
		return
	}
	if err != nil {
		c.rep.add(LevelProblem, "book", where, err.Error(), "let the executor's user read and write the book")
		return
	}
	// One reading: the check, and whether the book holds the settings' slip.
	slipInBook := false
	rep, err := verifyBookFile(set.Agent.Book, set.Agent.IssuerKeys, func(e book.FileEntry) error {
		slipInBook = slipInBook || c.slip != nil && e.Kind == book.KindSlip && e.Fingerprint == c.slip.Fingerprint
		return nil
	})
	if err != nil {
		c.rep.add(LevelProblem, "book", where, err.Error(), "let the executor's user read and write the book")
		return
	}
	if rep.Size >= book.NearFull {
		c.rep.add(LevelWarning, "book", where, fmt.Sprintf("%d of the %d entries a book may hold: from %d the executor refuses new calls (1001) so that the stubs of calls in flight can still be written",
			rep.Size, book.MaxEntries, book.MaxEntries-book.FullReserve),
			"start a new book: have the person sign a new slip, and point agent.book at a new file")
	}
	listed := 0
	for _, p := range rep.Problems {
		if listed == maxListed {
			c.rep.add(LevelProblem, "book", where, fmt.Sprintf("and %d more problems", len(rep.Problems)-listed), "run `mcp-executor verify` for all of them")
			break
		}
		listed++
		fix := "the executor refuses every call under a book with a problem: keep this book as evidence and start a new one"
		if p.Code == "issuer-not-expected" {
			fix = "put the thumbprint of the passkey that signed this slip into agent.issuerKeys, if you trust it"
		}
		c.rep.add(LevelProblem, "book", fmt.Sprintf("%s %s", where, lineName(p.Line)), p.Code+": "+p.Message, fix)
	}
	for i, b := range rep.Breaches {
		if i == maxListed {
			c.rep.add(LevelWarning, "book", where, fmt.Sprintf("and %d more breaches", len(rep.Breaches)-i), "run `mcp-executor verify` for all of them")
			break
		}
		c.rep.add(LevelWarning, "book", fmt.Sprintf("%s %s", where, lineName(b.Line)), "breach "+b.Code+": "+b.Message, "")
	}
	if len(rep.Problems) == 0 {
		msg := fmt.Sprintf("%d entries; no problem", rep.Size)
		if !rep.Intact {
			msg = fmt.Sprintf("%d entries; not every signature could be checked here", rep.Size)
		}
		if c.slip != nil && !slipInBook {
			msg += "; the slip is not in it yet: the next start adds it"
		}
		c.rep.add(LevelOK, "book", where, msg, "")
	}
}

func lineName(n int) string {
	if n == 0 {
		return "(as a whole)"
	}
	return fmt.Sprintf("line %d", n)
}

// servers checks every tool server as a start would find it: a stdio
// server's program, its folder and its credentials, an HTTP server's
// headers, read from their sources as the start reads them.
func (c *setupCheck) servers() {
	set := c.set
	if set.Servers == nil {
		c.stdioServer("tool server", "server", &set.Server)
		return
	}
	for _, name := range set.ServerOrder {
		u := set.Servers[name]
		place := settings.Place("servers", name)
		if u.HTTP != nil {
			c.httpServer("tool server "+name, place, u.HTTP)
			continue
		}
		c.stdioServer("tool server "+name, place, u.Stdio)
	}
}

// stdioServer checks a server started as a child: its program is found,
// its working folder is there, its credentials read.
func (c *setupCheck) stdioServer(what, place string, sv *settings.Server) {
	program, warning, err := toolserver.Lookup(sv.Command, sv.Path, sv.Cwd)
	switch {
	case err != nil:
		c.rep.add(LevelProblem, what, place+".command", err.Error(), "name the program by its path, or give the folders to look in with "+place+".path")
	case warning != "":
		// The settings warned already: the PATH it was found through is the executor's.
		c.rep.add(LevelOK, what, place+".command", "found through the executor's PATH: "+program, "")
	default:
		c.rep.add(LevelOK, what, place+".command", "found: "+program, "")
	}
	if d, err := os.Stat(sv.Cwd); err != nil || !d.IsDir() {
		c.rep.add(LevelProblem, what, place+".cwd", "the server's working folder "+sv.Cwd+" is not there", "make the folder, or correct "+place+".cwd")
	}
	for _, ev := range sv.Env {
		c.secret("credential "+ev.Name, settings.Place(place+".env", ev.Name), ev, false)
	}
}

// httpServer checks a server reached by streamable HTTP: its headers are
// read. The server itself is not contacted (an initialize would open a
// session there); `mcp-executor tools` lists its tools.
func (c *setupCheck) httpServer(what, place string, h *settings.HTTPServer) {
	c.rep.add(LevelOK, what, place+".url", h.URL+": reached by streamable HTTP at the first message; check does not contact it (`mcp-executor tools` does)", "")
	for _, ev := range h.Headers {
		c.secret("header "+ev.Name, settings.Place(place+".headers", ev.Name), ev, true)
	}
}

// secret checks one credential or header: its source is reached and its
// value read as the start reads it (boot.ReadSecret), and a header's value
// is one an HTTP request can carry.
func (c *setupCheck) secret(what, place string, ev settings.EnvVar, header bool) {
	value := ev.Value
	it := SetupItem{Level: LevelOK, What: what, Where: place, Message: "written in the settings themselves"}
	if !ev.IsValue {
		if vu := c.vaultUnread(what, place, ev.Source); vu != nil {
			c.rep.Items = append(c.rep.Items, *vu)
			return
		}
		st := keys.CheckSource(c.ctx, ev.Source, c.set.Dir, c.kopts)
		if it = sourceItem(what, place, st, "put the value where the settings say, or correct the source"); it.Level != LevelOK {
			c.rep.Items = append(c.rep.Items, it)
			return
		}
		v, err := boot.ReadSecret(c.ctx, ev.Name, ev.Source, c.set.Dir, c.kopts)
		if err != nil {
			c.rep.add(LevelProblem, what, place, err.Error(), "correct the value at its source")
			return
		}
		value = v
	}
	if why := boot.BadHeaderValue(value); header && why != "" {
		c.rep.add(LevelProblem, what, place, "the value "+why+": every request to the server would fail", "correct the value at its source")
		return
	}
	c.rep.Items = append(c.rep.Items, it)
}

func countOf(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
