package page

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// State is what GET /api/state gives the page: nothing secret.
type State struct {
	Origin  string      `json:"origin"`
	RPID    string      `json:"rpId"`
	Passkey *Registered `json:"passkey"` // null before registration
	// CodePending says a registration code waits to be entered (printed
	// where the page was started; never shown here), until CodeExpiresAt.
	CodePending   bool   `json:"codePending"`
	CodeExpiresAt string `json:"codeExpiresAt"`
	// PasskeyProblem says why the registered passkey signs nothing on this
	// page (it was registered for another origin); "" when it can sign.
	PasskeyProblem string `json:"passkeyProblem"`
	// AnswerProblem says why this page offers no approve, decline or
	// cancel under the slip in force ("" when it does): no passkey, a
	// passkey of another page, a slip naming another origin or rpId than
	// this page's, or a slip signed by another passkey.
	AnswerProblem string        `json:"answerProblem"`
	Trusted       bool          `json:"trusted"`    // the passkey's thumbprint is in agent.issuerKeys
	IssuerKeys    []string      `json:"issuerKeys"` // the settings' agent.issuerKeys
	SlipPath      string        `json:"slipPath"`
	Slip          *SlipView     `json:"slip"`      // null when there is no slip file
	SlipError     string        `json:"slipError"` // why the slip file does not check
	Cancelled     bool          `json:"cancelled"` // a cancellation file of this slip is there
	Actions       []string      `json:"actions"`   // the actions the settings' tools name
	Waiting       []WaitingView `json:"waiting"`
	// Others counts the requests in the queue that need no passkey (the
	// approve command answers them).
	Others int `json:"others"`
}

// SlipView is the slip in force, for the person to read.
type SlipView struct {
	Fingerprint string   `json:"fingerprint"`
	Purpose     string   `json:"purpose"`
	Actions     []string `json:"actions"`
	Approval    []string `json:"approval"` // actions that need the person's approval ("*" for all)
	ValidFrom   string   `json:"validFrom"`
	ValidUntil  string   `json:"validUntil"`
	Issuer      string   `json:"issuer"` // the passkey thumbprint
	Origin      string   `json:"origin"` // the issuer's origin, which every answer is checked against
	RPID        string   `json:"rpId"`
}

// WaitingView is one call waiting for a passkey approval.
type WaitingView struct {
	Request         string          `json:"request"`
	Tool            string          `json:"tool"`
	Action          string          `json:"action"`
	Amount          string          `json:"amount"`    // "" when none
	Arguments       json.RawMessage `json:"arguments"` // redacted
	ArgumentsSHA256 string          `json:"argumentsSha256"`
	ExpiresAt       string          `json:"expiresAt"`
	Slip            string          `json:"slip"`
	Approval        string          `json:"approval"` // the prepared approval's fingerprint
	Sentence        string          `json:"sentence"`
	OtherSlip       bool            `json:"otherSlip"` // prepared under a slip other than the one in force
	Problem         string          `json:"problem"`   // why it cannot be signed here ("" when it can)
}

func (s *Server) state(_ *http.Request, _ []byte) (any, error) {
	set, err := s.loadSettings()
	if err != nil {
		return nil, err
	}
	reg, err := s.registered(set)
	if err != nil {
		return nil, err
	}
	st := State{Origin: s.origin, RPID: s.rpID, Passkey: reg, IssuerKeys: set.Agent.IssuerKeys, SlipPath: set.Agent.Slip,
		Waiting: []WaitingView{}, Actions: actionsOf(set)}
	if st.IssuerKeys == nil {
		st.IssuerKeys = []string{}
	}
	if reg != nil {
		for _, k := range set.Agent.IssuerKeys {
			st.Trusted = st.Trusted || k == reg.Thumbprint
		}
	}
	pending, until := s.code.pendingCode(s.o.Now())
	st.CodePending = pending
	if pending {
		st.CodeExpiresAt = until.UTC().Format(approval.TimeLayout)
	}
	st.PasskeyProblem = s.passkeyProblem(reg)
	sl, err := s.currentSlip(set, reg)
	switch {
	case reg == nil:
		st.AnswerProblem = "No passkey is registered on this page."
	case st.PasskeyProblem != "":
		st.AnswerProblem = st.PasskeyProblem
	case sl != nil:
		st.AnswerProblem = s.slipProblem(sl, reg)
	}
	if err != nil {
		st.SlipError = err.Error()
	} else if sl != nil {
		st.Slip = viewOf(sl)
		if c, _, err := FirstCancellation(CancellationPaths(set), sl); err == nil && c != nil {
			st.Cancelled = true
		}
	}
	files, _, err := approval.Waiting(set.Approvals.Queue, s.o.Now())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, f := range files {
		var p Prepared
		if err := readStrict(filepath.Join(set.Approvals.Queue, PreparedName(f.ID)), &p); err != nil || p.Request != f.ID {
			st.Others++
			continue
		}
		w := WaitingView{Request: f.ID, Tool: p.Tool, Action: p.Action, Arguments: p.Arguments, ArgumentsSHA256: p.ArgumentsSHA256,
			ExpiresAt: p.ExpiresAt, Slip: p.Slip, Approval: p.Fingerprint, Sentence: approval.Sentence(p.Tool, p.Action, p.Amount, p.Arguments),
			OtherSlip: sl == nil || sl.Fingerprint != p.Slip}
		if _, err := p.Check(); err != nil {
			w.Problem = err.Error()
		} else if w.OtherSlip {
			w.Problem = "held under another slip than the one in force"
		} else if st.AnswerProblem != "" {
			w.Problem = st.AnswerProblem
		}
		if p.Amount != nil {
			w.Amount = strconv.FormatInt(p.Amount.Value, 10) + " " + p.Amount.Unit
		}
		st.Waiting = append(st.Waiting, w)
	}
	return st, nil
}

func actionsOf(set *settings.Settings) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, t := range set.Tools {
		if t.Action != "" && !seen[t.Action] {
			seen[t.Action] = true
			out = append(out, t.Action)
		}
	}
	sort.Strings(out)
	return out
}

func viewOf(sl *slip.Slip) *SlipView {
	v := &SlipView{Fingerprint: sl.Fingerprint, Purpose: sl.Purpose, Actions: sl.Actions, Approval: []string{},
		ValidFrom: canon.FormatTime(sl.ValidFrom), ValidUntil: canon.FormatTime(sl.ValidUntil), Issuer: sl.Issuer.Key.Thumbprint,
		Origin: sl.Issuer.Origin, RPID: sl.Issuer.RPID}
	for _, c := range sl.Requires {
		if c.Need == "approval" {
			a := c.Action
			if a == "" {
				a = "*"
			}
			v.Approval = append(v.Approval, a)
		}
	}
	return v
}

// challengeOut is what a prepare call answers: the token of the pending
// challenge, the challenge the passkey signs, the credential to use, and
// for a slip the content for the person to review.
type challengeOut struct {
	Token        string `json:"token"`
	Challenge    string `json:"challenge"`
	RPID         string `json:"rpId"`
	CredentialID string `json:"credentialId,omitempty"`
	Content      string `json:"content,omitempty"` // indented JSON text
	Fingerprint  string `json:"fingerprint,omitempty"`
}

// SlipChoices are the person's choices for a slip, with what `keys --json`
// printed (the permission: agent keys, the executor's service, requires).
type SlipChoices struct {
	Permission json.RawMessage `json:"permission"`
	IssuerName string          `json:"issuerName"`
	AgentName  string          `json:"agentName"`
	Actions    []string        `json:"actions"`
	Approval   []string        `json:"approval"` // actions that need the person's approval
	// Limits, one a line: "ACTION max|each N UNIT [per SECONDS]" or
	// "ACTION count N [per SECONDS]".
	Limits     []string `json:"limits"`
	ValidFrom  string   `json:"validFrom"`
	ValidUntil string   `json:"validUntil"`
	Purpose    string   `json:"purpose"`
}

// SlipFields builds a slip's fields from the choices and the registered
// passkey (the issuer). Everything is validated when the slip is prepared.
func SlipFields(c SlipChoices, reg *Registered) (map[string]any, error) {
	var perm struct {
		Agent    map[string]any `json:"agent"`
		With     map[string]any `json:"with"`
		Requires []any          `json:"requires"`
	}
	if err := decodeStrict(c.Permission, &perm); err != nil {
		return nil, bad("what keys --json printed: %v", err)
	}
	if perm.Agent == nil || perm.With == nil {
		return nil, bad("what keys --json printed holds no agent or with")
	}
	agent := map[string]any{"name": c.AgentName}
	for k, v := range perm.Agent {
		agent[k] = v
	}
	requires := perm.Requires
	for _, a := range c.Approval {
		if a = strings.TrimSpace(a); a != "" {
			requires = append(requires, map[string]any{"need": "approval", "action": a})
		}
	}
	limits := []any{}
	for _, line := range c.Limits {
		if strings.TrimSpace(line) == "" {
			continue
		}
		l, err := parseLimit(line)
		if err != nil {
			return nil, err
		}
		limits = append(limits, l)
	}
	actions := []any{}
	for _, a := range c.Actions {
		if a = strings.TrimSpace(a); a != "" {
			actions = append(actions, a)
		}
	}
	if requires == nil {
		requires = []any{}
	}
	return map[string]any{
		"issuer":     map[string]any{"key": reg.Key, "name": c.IssuerName, "origin": reg.Origin, "rpId": reg.RPID},
		"agent":      agent,
		"actions":    actions,
		"limits":     limits,
		"requires":   normalise(requires),
		"with":       []any{normalise(perm.With)},
		"validFrom":  c.ValidFrom,
		"validUntil": c.ValidUntil,
		"purpose":    c.Purpose,
	}, nil
}

// normalise turns JSON numbers decoded by encoding/json (float64) into the
// int64 a canonical value holds.
func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	case float64:
		if x >= 0 && x <= 1<<53-1 && x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// parseLimit reads "ACTION max|each N UNIT [per SECONDS]" or
// "ACTION count N [per SECONDS]".
func parseLimit(line string) (map[string]any, error) {
	f := strings.Fields(line)
	wrong := bad("the limit %q is not \"ACTION max|each N UNIT [per SECONDS]\" or \"ACTION count N [per SECONDS]\"", line)
	if len(f) < 3 {
		return nil, wrong
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || n < 0 {
		return nil, wrong
	}
	l := map[string]any{"action": f[0], f[1]: n}
	rest := f[3:]
	switch f[1] {
	case "max", "each":
		if len(rest) < 1 {
			return nil, wrong
		}
		l["unit"], rest = rest[0], rest[1:]
	case "count":
	default:
		return nil, wrong
	}
	if len(rest) == 2 && rest[0] == "per" {
		per, err := strconv.ParseInt(rest[1], 10, 64)
		if err != nil || per <= 0 {
			return nil, wrong
		}
		l["per"] = per
	} else if len(rest) != 0 {
		return nil, wrong
	}
	return l, nil
}

func (s *Server) slipPrepare(_ *http.Request, body []byte) (any, error) {
	var c SlipChoices
	if err := decodeBody(body, &c); err != nil {
		return nil, err
	}
	_, reg, err := s.loadRegistered()
	if err != nil {
		return nil, err
	}
	fields, err := SlipFields(c, reg)
	if err != nil {
		return nil, err
	}
	content := slip.SlipContent(fields)
	if err := slip.ValidateContent(content); err != nil {
		return nil, bad("the slip would not be sound: %v", err)
	}
	prep, err := slip.Prepare(record.Slip, content)
	if err != nil {
		return nil, bad("the slip: %v", err)
	}
	pretty, err := encode(json.RawMessage(prep.ContentBytes))
	if err != nil {
		return nil, err
	}
	token := s.remember(&pending{kind: "slip", challenge: prep.Challenge, prepared: prep})
	return challengeOut{Token: token, Challenge: canon.B64(prep.Challenge), RPID: s.rpID, CredentialID: reg.CredentialID,
		Content: string(pretty), Fingerprint: prep.Fingerprint}, nil
}

// loadRegistered reads the settings and the passkey registered for this
// page (mustRegistered).
func (s *Server) loadRegistered() (*settings.Settings, *Registered, error) {
	set, err := s.loadSettings()
	if err != nil {
		return nil, nil, err
	}
	reg, err := s.mustRegistered(set)
	if err != nil {
		return nil, nil, err
	}
	return set, reg, nil
}

func (s *Server) mustRegistered(set *settings.Settings) (*Registered, error) {
	reg, err := s.registered(set)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return nil, &apiError{http.StatusConflict, "register a passkey first"}
	}
	if msg := s.passkeyProblem(reg); msg != "" {
		return nil, &apiError{http.StatusConflict, msg}
	}
	return reg, nil
}

// slipInForce is the slip a held call or a cancellation is signed under.
func (s *Server) slipInForce(set *settings.Settings, reg *Registered) (*slip.Slip, error) {
	sl, err := s.currentSlip(set, reg)
	if err != nil {
		return nil, &apiError{http.StatusConflict, err.Error()}
	}
	if sl == nil {
		return nil, &apiError{http.StatusConflict, "there is no slip at " + set.Agent.Slip}
	}
	if msg := s.slipProblem(sl, reg); msg != "" {
		return nil, &apiError{http.StatusConflict, msg}
	}
	return sl, nil
}

func (s *Server) approvalPrepare(_ *http.Request, body []byte) (any, error) {
	var in struct {
		Request  string `json:"request"`
		Decision string `json:"decision"` // "approve" or "decline"
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	if !canon.IsID(in.Request) || (in.Decision != "approve" && in.Decision != "decline") {
		return nil, bad("name a request id and the decision approve or decline")
	}
	set, reg, err := s.loadRegistered()
	if err != nil {
		return nil, err
	}
	sl, err := s.slipInForce(set, reg)
	if err != nil {
		return nil, err
	}
	var f Prepared
	if err := readStrict(filepath.Join(set.Approvals.Queue, PreparedName(in.Request)), &f); err != nil || f.Request != in.Request {
		return nil, &apiError{http.StatusNotFound, "no call waits for a passkey approval under that id (answered, ended or never made)"}
	}
	prep, err := f.Check()
	if err != nil {
		return nil, &apiError{http.StatusConflict, err.Error()}
	}
	if f.Slip != sl.Fingerprint {
		return nil, &apiError{http.StatusConflict, "the call was held under another slip than the one in force"}
	}
	p := &pending{kind: in.Decision, prepared: prep, request: in.Request, slip: sl}
	if in.Decision == "approve" {
		p.challenge = prep.Challenge
	} else {
		p.signed = DeclineSigningInput(prep.Fingerprint)
		sum := sha256.Sum256(p.signed)
		p.challenge = sum[:]
	}
	token := s.remember(p)
	return challengeOut{Token: token, Challenge: canon.B64(p.challenge), RPID: s.rpID, CredentialID: reg.CredentialID,
		Fingerprint: prep.Fingerprint}, nil
}

func (s *Server) cancelPrepare(_ *http.Request, body []byte) (any, error) {
	var in struct{}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	set, reg, err := s.loadRegistered()
	if err != nil {
		return nil, err
	}
	sl, err := s.slipInForce(set, reg)
	if err != nil {
		return nil, err
	}
	prep, err := consent.PrepareCancellation(sl.Fingerprint, s.o.Now())
	if err != nil {
		return nil, err
	}
	token := s.remember(&pending{kind: "cancel", challenge: prep.Challenge, prepared: prep, slip: sl})
	return challengeOut{Token: token, Challenge: canon.B64(prep.Challenge), RPID: s.rpID, CredentialID: reg.CredentialID,
		Fingerprint: prep.Fingerprint}, nil
}

// sign takes the passkey's answer to a pending challenge, checks it against
// the registered passkey (the same steps a reader of the record runs), and
// does what the challenge was for.
func (s *Server) sign(_ *http.Request, body []byte) (any, error) {
	var in struct {
		Token     string    `json:"token"`
		Assertion Assertion `json:"assertion"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	p, err := s.take(in.Token)
	if err != nil {
		return nil, err
	}
	if p.kind == "register" || p.kind == "replace" {
		return nil, bad("this challenge is for a registration")
	}
	set, reg, err := s.loadRegistered()
	if err != nil {
		return nil, err
	}
	key, err := reg.JWK()
	if err != nil {
		return nil, err
	}
	a, err := in.Assertion.Decode()
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := s.checkAnsweredHere(a); err != nil {
		return nil, &apiError{http.StatusForbidden, "the passkey signature does not check: " + err.Error()}
	}
	if p.slip != nil {
		if msg := s.slipProblem(p.slip, reg); msg != "" {
			return nil, &apiError{http.StatusConflict, msg}
		}
	}
	if p.kind == "replace-confirm" && p.replaces != reg.Thumbprint {
		return nil, &apiError{http.StatusConflict, "the registered passkey changed meanwhile; start again"}
	}
	signed := p.signed
	if p.prepared != nil && p.kind != "decline" {
		signed = []byte(p.prepared.ProtectedB64 + "." + p.prepared.PayloadB64)
	}
	// The origin and rpId were compared with this page's above, so the
	// check below refuses only the signature, the challenge or the flags.
	if _, err := passkey.CheckAssertion(key, s.rpID, s.origin, signed, a, nil); err != nil {
		return nil, &apiError{http.StatusForbidden, "the passkey signature does not check: " + err.Error()}
	}
	return s.signedFor(set, reg, p, a, in.Assertion)
}

// signedFor does what a checked passkey answer to a pending challenge was
// for: a replacement, a slip, an approval, a decline or a cancellation.
func (s *Server) signedFor(set *settings.Settings, reg *Registered, p *pending, a passkey.Assertion, raw Assertion) (any, error) {
	switch p.kind {
	case "replace-confirm":
		return s.storeReplacement(set, p)
	case "slip":
		return s.saveSlip(set, reg, p.prepared, a)
	case "approve":
		v, err := slip.Assemble(p.prepared, a)
		if err != nil {
			return nil, err
		}
		prop, err := consent.ProposalOf(p.prepared)
		if err != nil {
			return nil, err
		}
		if _, err := consent.CheckApproval(v, p.slip, prop, s.o.Now(), nil); err != nil {
			return nil, bad("the approval does not check against the slip (origin %s): %v", p.slip.Issuer.Origin, err)
		}
		raw, err := canon.Marshal(v)
		if err != nil {
			return nil, err
		}
		return s.answer(set, Signed{Request: p.request, Approval: raw}, "approved")
	case "decline":
		return s.answer(set, Signed{Request: p.request, Declined: &raw}, "declined")
	case "cancel":
		v, err := slip.Assemble(p.prepared, a)
		if err != nil {
			return nil, err
		}
		if _, err := consent.CheckCancellation(v, p.slip); err != nil {
			return nil, bad("the cancellation does not check against the slip (origin %s): %v", p.slip.Issuer.Origin, err)
		}
		raw, err := canon.Marshal(v)
		if err != nil {
			return nil, err
		}
		path := StateCancellationPath(set)
		if err := approval.WriteFileAtomic(filepath.Dir(path), filepath.Base(path), append(raw, '\n')); err != nil {
			return nil, err
		}
		s.log.Info("page: a cancellation was signed", slog.String("slip", p.slip.Fingerprint))
		return map[string]string{"done": "cancelled", "file": path, "fingerprint": p.prepared.Fingerprint}, nil
	}
	return nil, bad("unknown challenge")
}

// answer writes the signed answer beside the request, while the request
// still waits.
func (s *Server) answer(set *settings.Settings, f Signed, done string) (any, error) {
	dir := set.Approvals.Queue
	if _, err := os.Stat(filepath.Join(dir, PreparedName(f.Request))); err != nil {
		return nil, &apiError{http.StatusGone, "the call no longer waits (answered, ended or expired)"}
	}
	if _, err := os.Stat(filepath.Join(dir, SignedName(f.Request))); err == nil {
		return nil, &apiError{http.StatusConflict, "the call is answered already"}
	}
	data, err := encode(f)
	if err != nil {
		return nil, err
	}
	if err := approval.WriteFileAtomic(dir, SignedName(f.Request), data); err != nil {
		return nil, err
	}
	s.log.Info("page: a held call was answered with the passkey", slog.String("request", f.Request), slog.String("answer", done))
	return map[string]string{"done": done, "request": f.Request}, nil
}

// saveSlip assembles the signed slip, checks it as the executor will
// (trusting the registered passkey) and writes it to the settings' slip
// path, atomically.
func (s *Server) saveSlip(set *settings.Settings, reg *Registered, prep *slip.Prepared, a passkey.Assertion) (any, error) {
	v, err := slip.Assemble(prep, a)
	if err != nil {
		return nil, err
	}
	if _, res := slip.Check(v, slip.Options{IssuerKeys: []string{reg.Thumbprint}}); !res.Sound() {
		msg := "its signature could not be checked"
		if len(res.Problems) > 0 {
			msg = res.Problems[0].Error()
		}
		return nil, bad("the signed slip does not check: %s", msg)
	}
	raw, err := canon.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"done": "signed", "file": set.Agent.Slip, "fingerprint": prep.Fingerprint}
	dir, name := filepath.Split(set.Agent.Slip)
	err = os.MkdirAll(dir, 0o700)
	if err == nil {
		err = approval.WriteFileAtomic(dir, name, append(raw, '\n'))
	}
	if err != nil {
		// The slip could not be written (in a pod the settings' folder is a
		// read-only mount): the signed slip, which is no secret, goes back
		// to the person to put where the executor reads it (the chart's
		// executor.slip), so that the signature is not lost.
		s.log.Warn("page: a slip was signed but could not be saved", slog.String("slip", prep.Fingerprint), slog.String("error", err.Error()))
		out["done"] = "not-saved"
		out["reason"] = err.Error()
		out["slip"] = string(raw)
		return out, nil
	}
	s.log.Info("page: a slip was signed", slog.String("slip", prep.Fingerprint))
	if !contains(set.Agent.IssuerKeys, reg.Thumbprint) {
		out["warning"] = "the settings' agent.issuerKeys does not name this passkey (" + reg.Thumbprint + "): the executor will not start with this slip until it does"
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
