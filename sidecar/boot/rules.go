package boot

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// NoRulesStated stops a start with no rules file where the slip states
// rules on content: the executor would run without the rules the person
// approved.
func NoRulesStated(sl *slip.Slip) error {
	for _, sw := range sl.Agent.Software {
		if strings.HasPrefix(sw.Name, receipt.RulesSoftwarePrefix) {
			return fmt.Errorf("the slip states rules on content (%q) and the settings name no contentRules file", sw.Name)
		}
	}
	return nil
}

// RulesApproved checks a rules file's fingerprint against what the slip
// states: where it states software, the rules in force must be among it.
func RulesApproved(sl *slip.Slip, fp string) error {
	if len(sl.Agent.Software) == 0 {
		return nil
	}
	for _, sw := range sl.Agent.Software {
		if sw.SHA256 == fp {
			return nil
		}
	}
	return errors.New("the slip states the agent's software and the rules on content in force are not among it: the person approved other rules than these")
}

// LoadContentRules reads the rules file the settings name, checks that
// the slip does not state other rules, and checks the tools the rules name
// against the settings' tools.
func LoadContentRules(set *settings.Settings, sl *slip.Slip, log *slog.Logger) (*contentrules.Rules, error) {
	rs, err := contentrules.Load(set.ContentRules)
	if err != nil {
		return nil, err
	}
	if err := RulesApproved(sl, rs.Fingerprint()); err != nil {
		return nil, fmt.Errorf("content rules %s: %w", set.ContentRules, err)
	}
	stated := false
	for _, sw := range sl.Agent.Software {
		stated = stated || sw.SHA256 == rs.Fingerprint()
	}
	if !stated {
		log.Warn("the slip does not state the rules on content in force; a reader cannot tell they are the ones the person approved",
			slog.String("rules", rs.Fingerprint()))
	}
	for _, tool := range rs.Tools() {
		if _, ok := set.Tools[tool]; ok {
			continue
		}
		if set.Unlisted == settings.UnlistedForward {
			return nil, fmt.Errorf("content rules %s name the tool %q, which no rule in tools names, and unlisted is forward: a call to it would be sent on with no content rule tested", set.ContentRules, tool)
		}
		log.Warn("a content rule names a tool no rule in tools names; such a call is refused as unlisted before any content rule",
			slog.String("tool", tool))
	}
	return rs, nil
}
