package report

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// TestSlipVerdicts: beside the rule's decision, tools shows what the slip
// says of the rule's action: allowed (with its limits), held for the
// person's approval, or not in the slip at all; and, without a sound
// slip, why there is none to read.
func TestSlipVerdicts(t *testing.T) {
	e, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: "/bin/true",
		Tools: map[string]devsetup.Tool{
			"read":  {Action: "provared.data.read"},
			"order": {Action: "supplies.order", Amount: map[string]any{"unit": "GBP", "pointer": "/total"}},
			"send":  {Action: "provared.message.send"},
			"write": {Action: "provared.data.change"},
		},
		Actions:  []string{"provared.data.read", "supplies.order", "provared.message.send"},
		Limits:   []map[string]any{{"action": "supplies.order", "max": 500, "unit": "GBP", "per": 86400}, {"action": "provared.message.send", "count": 3}},
		Requires: []map[string]any{{"need": "approval", "action": "supplies.order", "above": 100, "unit": "GBP"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := settings.Load(e.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	sv := readSlipForTools(set, time.Now())
	if !strings.Contains(sv.summary, "slip "+e.Slip.Fingerprint+" signed by trusted passkey "+e.Thumbprint) {
		t.Errorf("summary %q", sv.summary)
	}
	for action, want := range map[string]string{
		"provared.data.read":    "allows",
		"supplies.order":        "needs approval above 100 GBP, max 500 GBP per 86400s",
		"provared.message.send": "allows, count 3",
		"provared.data.change":  "not in slip",
	} {
		if got := sv.verdict(action); got != want {
			t.Errorf("%s: %q, want %q", action, got, want)
		}
	}
	if got := readSlipForTools(set, e.Slip.ValidUntil.Add(time.Second)).verdict("provared.data.read"); got != "outside valid time" {
		t.Errorf("after the slip's time: %q", got)
	}

	// Trusting another passkey: the slip is not sound, and says why.
	other := *set
	other.Agent.IssuerKeys = []string{"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"}
	sv = readSlipForTools(&other, time.Now())
	if sv.verdict("provared.data.read") != "slip not sound" || !strings.Contains(sv.summary, "signed by passkey "+e.Thumbprint+", which agent.issuerKeys does not name") {
		t.Errorf("another trusted passkey: %q, %q", sv.verdict("provared.data.read"), sv.summary)
	}
	// No trusted passkey yet (before the page step's thumbprint): what to put there.
	other.Agent.IssuerKeys = nil
	if sv = readSlipForTools(&other, time.Now()); !strings.Contains(sv.summary, "agent.issuerKeys names no passkey yet: put that thumbprint there") {
		t.Errorf("no trusted passkey: %q", sv.summary)
	}
	// No slip yet: the page is where to get one.
	if err := os.Remove(e.SlipPath); err != nil {
		t.Fatal(err)
	}
	sv = readSlipForTools(set, time.Now())
	if sv.verdict("provared.data.read") != "no slip" || !strings.Contains(sv.summary, "mcp-executor page") {
		t.Errorf("no slip: %q, %q", sv.verdict("provared.data.read"), sv.summary)
	}
}

// TestToolsTextShowsBothVerdicts: the table names its columns, shows the
// slip's verdict beside the rule's, and a dash where the slip is not
// asked (a rule that refuses, an unlisted tool).
func TestToolsTextShowsBothVerdicts(t *testing.T) {
	res := &ToolsResult{Slip: "slip X signed by trusted passkey Y", Tools: []ToolRow{
		{Name: "write_file", Decision: "allow", Slip: "not in slip", Rule: "exact", Action: "provared.data.change", Annotations: json.RawMessage(`{"destructiveHint":true}`)},
		{Name: "move_file", Decision: "refuse", Rule: "exact"},
		{Name: "other", Decision: "unlisted", Annotations: json.RawMessage("null")},
	}}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := [][]string{
		{"slip:", "slip X signed by trusted passkey Y"},
		{"tool", "rule", "slip", "decided", "by", "action", "amount,", "quota,", "the", "server's", "hints"},
		{"write_file", "allow", "not", "in", "slip", "exact", "provared.data.change", "destructive=true"},
		{"move_file", "refuse", "-", "exact", "-"},
		{"other", "unlisted", "-", "-", "-"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines:\n%s", len(got), b.String())
	}
	for i, w := range want {
		if f := strings.Fields(got[i]); strings.Join(f, " ") != strings.Join(w, " ") && !(i == 0 && strings.HasPrefix(got[i], "slip: ")) {
			t.Errorf("line %d: %q, want the fields %q", i+1, got[i], w)
		}
	}
}

// lastBytes keeps the end of a tool server's standard error, and said
// shows the lines that say why it ended (or its last two), with no control
// character.
func TestServerLastWords(t *testing.T) {
	l := &lastBytes{limit: 64}
	if got := l.said(); got != ", saying nothing on its standard error" {
		t.Errorf("nothing said: %q", got)
	}
	_, _ = l.Write([]byte(strings.Repeat("x", 100) + "\n"))
	_, _ = l.Write([]byte("[server] Error: Cannot find module 'a.js'\n\x1b[31mred\x1b[0m\n"))
	if len(l.b) != 64 {
		t.Errorf("kept %d bytes, want the last 64", len(l.b))
	}
	if got := l.said(); got != "; the end of its standard error: Error: Cannot find module 'a.js'" {
		t.Errorf("said %q", got)
	}
	l = &lastBytes{limit: 4096}
	_, _ = l.Write([]byte("starting\nlistening\n\x1b[2Jgone\n"))
	if got := l.said(); got != "; the end of its standard error: listening | ?[2Jgone" {
		t.Errorf("said %q", got)
	}
}
