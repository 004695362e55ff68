package sidecar

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// rulesSoftwarePrefix begins the agent.software entry of a slip that states
// the rules on content the person approved.
const rulesSoftwarePrefix = "Content rules of "

// noRulesStated stops a start with no rules file where the slip states
// rules on content: the executor would run without the rules the person
// approved.
func noRulesStated(sl *slip.Slip) error {
	for _, sw := range sl.Agent.Software {
		if strings.HasPrefix(sw.Name, rulesSoftwarePrefix) {
			return fmt.Errorf("the slip states rules on content (%q) and the settings name no contentRules file", sw.Name)
		}
	}
	return nil
}

// rulesApproved checks a rules file's fingerprint against what the slip
// states: where it states software, the rules in force must be among it.
func rulesApproved(sl *slip.Slip, fp string) error {
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

// loadContentRules reads the rules file the settings name.
func loadContentRules(set *settings.Settings, sl *slip.Slip) (contentJudge, string, error) {
	return nil, "", fmt.Errorf("content rules %s: this build cannot read rules on content yet", set.ContentRules)
}
