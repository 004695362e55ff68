package slip

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestContentFaultsGolden validates a table of faulty slips, each one
// change from a sound slip, and compares the codes and messages with
// testdata/content-faults.golden (go test -update rewrites it).
func TestContentFaultsGolden(t *testing.T) {
	d, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	base := func() map[string]any {
		c := SlipContent(slipFields(t, d.Issuer("Sam")))
		c["id"] = "AgICAgICAgICAgICAgICAg"
		return c
	}
	faults := []struct {
		name string
		edit func(c map[string]any)
	}{
		{"sound", func(c map[string]any) {}},
		{"unknown member", func(c map[string]any) { c["colour"] = "red" }},
		{"no purpose", func(c map[string]any) { delete(c, "purpose") }},
		{"reserved action", func(c map[string]any) { c["actions"] = []any{"provared.money.send"} }},
		{"repeated action", func(c map[string]any) { c["actions"] = []any{"a", "a"} }},
		{"65 actions", func(c map[string]any) {
			l := []any{}
			for i := range 65 {
				l = append(l, fmt.Sprintf("a%d", i))
			}
			c["actions"] = l
		}},
		{"two kinds in a limit", func(c map[string]any) {
			c["limits"] = []any{map[string]any{"action": "supplies.order", "max": 1, "count": 1, "unit": "GBP"}}
		}},
		{"period too long", func(c map[string]any) {
			c["limits"] = []any{map[string]any{"action": "supplies.order", "count": 1, "per": MaxPeriodSeconds + 1}}
		}},
		{"each with period", func(c map[string]any) {
			c["limits"] = []any{map[string]any{"action": "supplies.order", "each": 1, "per": 60, "unit": "GBP"}}
		}},
		{"two units", func(c map[string]any) {
			c["limits"] = []any{map[string]any{"action": "supplies.order", "max": 1, "unit": "GBP"}, map[string]any{"action": "supplies.order", "each": 1, "unit": "EUR"}}
		}},
		{"same limit twice", func(c map[string]any) {
			c["limits"] = []any{map[string]any{"action": "supplies.order", "count": 1}, map[string]any{"action": "supplies.order", "count": 2}}
		}},
		{"above without action", func(c map[string]any) {
			c["requires"] = []any{map[string]any{"need": "approval", "above": 1, "unit": "GBP"}}
		}},
		{"forbidden kind allowed", func(c map[string]any) {
			c["actions"], c["limits"], c["requires"] = []any{"provared.data.delete"}, []any{}, []any{}
		}},
		{"unknown never", func(c map[string]any) { c["never"] = []any{"lie"} }},
		{"repeated service", func(c map[string]any) {
			c["with"] = []any{map[string]any{"id": "a", "name": "A"}, map[string]any{"id": "a", "name": "B"}}
		}},
		{"validUntil not later", func(c map[string]any) { c["validUntil"] = c["validFrom"] }},
		{"purpose too long", func(c map[string]any) { c["purpose"] = strings.Repeat("é", 1001) }},
		{"passes 11", func(c map[string]any) { c["passes"] = 11 }},
		{"http origin", func(c map[string]any) { c["issuer"].(map[string]any)["origin"] = "http://sign.example.org" }},
		{"agent keys reversed", func(c map[string]any) {
			ks := c["agent"].(map[string]any)["keys"].([]any)
			c["agent"].(map[string]any)["keys"] = []any{ks[1], ks[0]}
		}},
	}
	var out strings.Builder
	for _, f := range faults {
		c := base()
		f.edit(c)
		fmt.Fprintf(&out, "%s: %v\n", f.name, ValidateContent(c))
	}
	path := filepath.Join("testdata", "content-faults.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if out.String() != string(want) {
		t.Errorf("content faults differ from %s:\n%s", path, out.String())
	}
}
