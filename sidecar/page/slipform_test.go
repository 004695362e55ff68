package page

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

func TestSlipPrepareRefusesWhatIsNotASlip(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	if code, _ := c.post("/api/slip/prepare", f.choices()); code != http.StatusConflict {
		t.Errorf("before a passkey is registered: %d", code)
	}
	pk := newSoftPasskey(t, f.origin, "localhost")
	b := c.must("/api/register/begin", map[string]any{"code": f.code})
	c.must("/api/register/finish", map[string]any{"token": b["token"], "registration": pk.register(challengeOf(t, b))})
	edits := map[string]func(*SlipChoices){
		"a limit line of no form":            func(s *SlipChoices) { s.Limits = []string{"supplies.order at most 5"} },
		"a limit on an action not taken":     func(s *SlipChoices) { s.Limits = []string{"other.thing max 5 GBP"} },
		"an approval of an action not taken": func(s *SlipChoices) { s.Approval = []string{"other.thing"} },
		"no actions":                         func(s *SlipChoices) { s.Actions = nil },
		"an action name of no form":          func(s *SlipChoices) { s.Actions = []string{"Supplies Order"} },
		"until before from":                  func(s *SlipChoices) { s.ValidFrom, s.ValidUntil = s.ValidUntil, s.ValidFrom },
		"a time of no form":                  func(s *SlipChoices) { s.ValidFrom = "tomorrow" },
		"no purpose":                         func(s *SlipChoices) { s.Purpose = "" },
		"not what keys --json printed":       func(s *SlipChoices) { s.Permission = json.RawMessage(`{"agent":{}}`) },
		"keys --json with a member more":     func(s *SlipChoices) { s.Permission = json.RawMessage(`{"agent":{},"with":{},"requires":[],"x":1}`) },
	}
	for name, edit := range edits {
		ch := f.choices()
		edit(&ch)
		if code, out := c.post("/api/slip/prepare", ch); code != http.StatusBadRequest {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	out := c.must("/api/slip/prepare", f.choices())
	// A slip prepared but signed by another passkey is not saved.
	stranger := newSoftPasskey(t, f.origin, "localhost")
	if code, _ := c.post("/api/sign", map[string]any{"token": out["token"], "assertion": stranger.assert(challengeOf(t, out))}); code != http.StatusForbidden {
		t.Errorf("a slip signed by another passkey: %d", code)
	}
	if _, err := os.Stat(f.slip); err == nil {
		t.Error("a slip signed by another passkey was saved")
	}
}

// TestASlipThatCannotBeSavedComesBack: when the slip's file cannot be
// written (in a pod, the settings' folder is a read-only mount; here its
// folder is a file), the signed slip comes back to the person, whole and
// sound, instead of the signature being lost.
func TestASlipThatCannotBeSavedComesBack(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	blocker := filepath.Join(f.dir, "ro")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f.writeSettingsSlip(filepath.Join(blocker, "slip.json"))
	prep := c.must("/api/slip/prepare", f.choices())
	out := c.must("/api/sign", map[string]any{"token": prep["token"], "assertion": pk.assert(challengeOf(t, prep))})
	text, _ := out["slip"].(string)
	if out["done"] != "not-saved" || out["reason"] == "" || text == "" {
		t.Fatalf("the answer: %v", out)
	}
	v, err := recordValue([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	s, res := slip.Check(v, slip.Options{IssuerKeys: f.trusted()})
	if !res.Sound() || s.Fingerprint != prep["fingerprint"] {
		t.Fatalf("the slip given back does not check: %+v", res)
	}
}
