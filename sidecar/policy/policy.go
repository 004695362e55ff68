package policy

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

// The codes the executor gives refusals by its tool rules (red.prova/refused
// and red.prova/codes), and their denials' actions.
const (
	// ActionUnlisted and CodeUnlisted: no rule names the tool.
	ActionUnlisted = "executor.unlisted"
	CodeUnlisted   = "unlisted"
	// ActionRefused is a refuse rule's denial action when the rule names none.
	ActionRefused = "executor.refused"
	// CodeRefusedByRule: a "refuse": true rule decided the tool.
	CodeRefusedByRule = "refused-by-rule"
	// CodeQuota: the tool's quota is used up.
	CodeQuota = "quota"
)

// Policy is the settings' tool rules, with their quotas, and the redactor:
// the primitives of the sub-packages, put together for the engine.
type Policy struct {
	set      *settings.Settings
	rules    *glob.Rules
	quotas   *quota.Tracker
	redactor *redact.Redactor
}

// Rule is the rule that decides a tool name as the client sees it.
type Rule struct {
	settings.Tool
	Decision glob.Decision
}

// Seed gathers what the policy needs from the copy during the copy's one
// read at start (copylog.OpenWith with Kinds and Visit): the latest
// redaction salt, and the tool and time of each sent line of the last day
// whose tool's rule has a quota with a window; nothing of the other lines
// is kept.
type Seed struct {
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

// NewSeed makes the seed of the settings' policy, counting the sent lines
// of the day before now.
func NewSeed(set *settings.Settings, now time.Time) (*Seed, error) {
	rules, err := glob.NewRules(set.ToolOrder)
	if err != nil {
		return nil, fmt.Errorf("settings: tools: %w", err)
	}
	return &Seed{set: set, rules: rules, cut: now.Add(-quota.Day)}, nil
}

// Kinds are the kinds of copy line Visit takes: the salt always, sent
// lines only where some tool's rule has a quota with a window (the copy's
// checkpoint then spares reading every other line).
func (s *Seed) Kinds() []copylog.Kind {
	for _, t := range s.set.Tools {
		if windowed(t.Quota) {
			return []copylog.Kind{copylog.KindRedactionSalt, copylog.KindSent}
		}
	}
	return []copylog.Kind{copylog.KindRedactionSalt}
}

// Visit takes one line of the copy.
func (s *Seed) Visit(ln copylog.Line) error {
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

// New builds the rules and the redactor, and restores the quota windows
// from the copy's sent lines the seed kept. The salt is the copy's latest;
// when the copy holds none, one is made and written to the copy.
func New(set *settings.Settings, seed *Seed, cp *copylog.Log, log *slog.Logger) (*Policy, error) {
	p := &Policy{set: set, rules: seed.rules, quotas: quota.NewTracker()}
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
func (p *Policy) restoreQuotas(sent iter.Seq[sentCall], now time.Time) int {
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

// Rule finds the rule that decides name: exact beats glob, then the
// longest literal part, then file order.
func (p *Policy) Rule(name string) (Rule, bool) {
	d, ok := p.rules.Resolve(name)
	if !ok {
		return Rule{}, false
	}
	return Rule{Tool: p.set.Tools[d.Pattern], Decision: d}, true
}

// Listed reports whether a rule (exact or glob) names the tool.
func (p *Policy) Listed(name string) bool {
	_, ok := p.rules.Resolve(name)
	return ok
}

// Redact returns arguments (JSON) as the executor may show them: every
// secret-looking value replaced by [REDACTED:kind:tag]. Text that is not
// JSON is redacted as text.
func (p *Policy) Redact(args []byte) []byte {
	out, err := p.redactor.JSON(args)
	if err != nil {
		return []byte(p.redactor.Text(string(args)))
	}
	return out
}

// ReserveQuota counts a call of tool against the quota q; a full quota is
// an error that says which window is full.
func (p *Policy) ReserveQuota(tool string, q quota.Limits) (*quota.Reservation, error) {
	return p.quotas.Reserve(tool, q)
}
