package sidecar

import (
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// This file wires the policy primitives (sidecar/policy) into the call
// path: tool rules by exact name or glob, "refuse" rules, quotas and the
// redaction of argument values wherever the executor shows them.

// The codes the executor gives refusals by policy.
const (
	// ActionRefused is a refuse rule's denial action when the rule names none.
	ActionRefused = "executor.refused"
	// CodeRefusedByRule: a "refuse": true rule decided the tool.
	CodeRefusedByRule = "refused-by-rule"
	// CodeQuota: the tool's quota is used up.
	CodeQuota = "quota"
)

// policy is the executor's tool rules, quotas and redactor.
type policy struct {
	rules    *glob.Rules
	quotas   *quota.Tracker
	redactor *redact.Redactor
}

// toolRule is the rule that decides a tool name as the client sees it.
type toolRule struct {
	settings.Tool
	decision glob.Decision
}

// policySeed gathers what the policy needs from the copy during the copy's
// one read at start (copylog.OpenWith): the latest redaction salt, and the
// tool and time of each sent line of the last day whose tool's rule has a
// quota with a window; nothing of the other lines is kept.
type policySeed struct {
	set   *settings.Settings
	rules *glob.Rules
	cut   time.Time
	salt  []byte
	sent  []sentCall
}

// sentCall is a sent line as the quota windows need it.
type sentCall struct {
	tool string
	when time.Time
}

func newPolicySeed(set *settings.Settings, now time.Time) (*policySeed, error) {
	rules, err := glob.NewRules(set.ToolOrder)
	if err != nil {
		return nil, fmt.Errorf("settings: tools: %w", err)
	}
	return &policySeed{set: set, rules: rules, cut: now.Add(-quota.Day)}, nil
}

// kinds are the kinds of copy line visit takes: the salt always, sent
// lines only where some tool's rule has a quota with a window (the copy's
// checkpoint then spares reading every other line).
func (s *policySeed) kinds() []copylog.Kind {
	for _, t := range s.set.Tools {
		if windowed(t.Quota) {
			return []copylog.Kind{copylog.KindRedactionSalt, copylog.KindSent}
		}
	}
	return []copylog.Kind{copylog.KindRedactionSalt}
}

// visit takes one line of the copy.
func (s *policySeed) visit(ln copylog.Line) error {
	switch {
	case ln.Kind == copylog.KindRedactionSalt:
		if b := copylog.LatestSalt([]copylog.Line{ln}); b != nil {
			s.salt = b
		}
	case ln.Kind == copylog.KindSent && ln.When.After(s.cut) && windowedQuota(s.set, s.rules, ln.Tool):
		s.sent = append(s.sent, sentCall{tool: ln.Tool, when: ln.When})
	}
	return nil
}

// windowedQuota reports whether the rule that decides tool has a quota
// with a window (a per-run quota starts empty at every start).
func windowedQuota(set *settings.Settings, rules *glob.Rules, tool string) bool {
	d, ok := rules.Resolve(tool)
	if !ok {
		return false
	}
	return windowed(set.Tools[d.Pattern].Quota)
}

// windowed is whether q (nil for none) counts calls over a window.
func windowed(q *quota.Limits) bool {
	return q != nil && (q.PerMinute != 0 || q.PerHour != 0 || q.PerDay != 0)
}

// newPolicy builds the rules and the redactor, and restores the quota
// windows from the copy's sent lines. The salt is the copy's latest; when
// the copy holds none, one is made and written to the copy.
func newPolicy(set *settings.Settings, seed *policySeed, cp *copylog.Log, log *slog.Logger) (*policy, error) {
	p := &policy{rules: seed.rules, quotas: quota.NewTracker()}
	salt := seed.salt
	var err error
	if salt == nil {
		salt = redact.NewSalt()
		if err := cp.Append(copylog.Line{Kind: copylog.KindRedactionSalt, Salt: copylog.SaltText(salt)}); err != nil {
			return nil, fmt.Errorf("writing the redaction salt to the copy: %w", err)
		}
	}
	if p.redactor, err = redact.New(salt, set.Redaction); err != nil {
		return nil, fmt.Errorf("settings: redaction: %w", err)
	}
	if set.Redaction.ReplaceBuiltin {
		log.Warn("redaction: the built-in detectors of secrets are off; only redaction.extend and extendKeys redact")
	}
	n := p.restoreQuotas(slices.Values(seed.sent), time.Now())
	if n > 0 {
		log.Info("quota windows restored from the copy", slog.Int("calls", n))
	}
	return p, nil
}

// restoreQuotas counts the sent calls of the last day, as the seed kept
// them (only those of tools whose rule has a quota with a window), and
// reports how many it counted.
func (p *policy) restoreQuotas(sent iter.Seq[sentCall], now time.Time) int {
	byTool := map[string][]time.Time{}
	cut := now.Add(-quota.Day)
	n := 0
	for c := range sent {
		if !c.when.After(cut) {
			continue
		}
		byTool[c.tool] = append(byTool[c.tool], c.when)
		n++
	}
	for tool, times := range byTool {
		p.quotas.Restore(tool, times)
	}
	return n
}

// resolve finds the rule that decides name: exact beats glob, then the
// longest literal part, then file order.
func (p *policy) resolve(set *settings.Settings, name string) (toolRule, bool) {
	d, ok := p.rules.Resolve(name)
	if !ok {
		return toolRule{}, false
	}
	return toolRule{Tool: set.Tools[d.Pattern], decision: d}, true
}

// toolRule is the rule that decides a tool name, if any.
func (e *Executor) toolRule(name string) (toolRule, bool) { return e.pol.resolve(e.set, name) }

// toolListed reports whether a rule (exact or glob) names the tool.
func (e *Executor) toolListed(name string) bool {
	_, ok := e.pol.rules.Resolve(name)
	return ok
}

// RedactArgs returns arguments (JSON) as the executor may show them: every
// secret-looking value replaced by [REDACTED:kind:tag]. Text that is not
// JSON is redacted as text. It is what approval prompts, queue files, logs
// and errors show ([approval.Options].Redact).
func (e *Executor) RedactArgs(args []byte) []byte {
	out, err := e.pol.redactor.JSON(args)
	if err != nil {
		return []byte(e.pol.redactor.Text(string(args)))
	}
	return out
}

// reserveQuota counts the call against its rule's quota; a full quota
// refuses it (with a denial) and reports false.
func (s *Session) reserveQuota(tc *toolCall, rule toolRule) bool {
	if rule.Quota == nil {
		return true
	}
	res, err := s.e.pol.quotas.Reserve(tc.tool, *rule.Quota)
	if err != nil {
		s.refuse(tc, refusal{action: rule.Action, reason: "other", refused: CodeQuota, codes: []string{CodeQuota}, why: err.Error()})
		return false
	}
	tc.quota = res
	return true
}

// refuseByRule refuses a call whose rule says "refuse": true.
func (s *Session) refuseByRule(tc *toolCall, rule toolRule) {
	action := rule.Action
	if action == "" {
		action = ActionRefused
	}
	s.refuse(tc, refusal{action: action, reason: "other", refused: CodeRefusedByRule, codes: []string{CodeRefusedByRule},
		why: "the executor's settings refuse the tool " + quote(tc.tool) + " (rule " + rule.decision.Label() + ")"})
}

// commitQuota records a sent call against its quota.
func (tc *toolCall) commitQuota() {
	if tc.quota != nil {
		tc.quota.Commit()
	}
}

// releaseQuota forgets a call that was not sent (it does nothing after
// commitQuota).
func (tc *toolCall) releaseQuota() {
	if tc.quota != nil {
		tc.quota.Release()
	}
}

// serverOf names the server a tool name routes to, "" with the single
// "server" form.
func (e *Executor) serverOf(tool string) string {
	server, _, _ := e.set.Route(tool)
	return server
}
