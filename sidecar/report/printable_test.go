package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// A client's tool name reaches the copy as it was sent (a "*" rule lets
// any name through): the report prints it with its terminal escapes
// escaped, and the compare summary alike, each of its lines apart.
func TestUsageTextEscapes(t *testing.T) {
	tool := "x\x1b[2J\x07\u202etxt\u009b"
	when := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	res := UsageFromCopy(slices.Values([]copylog.Line{
		{Kind: copylog.KindSent, Call: "c1", Tool: tool, When: when},
		{Kind: copylog.KindDenial, Tool: tool, Reason: "other", Codes: []string{"unlisted"}},
	}))
	res.Compare = "compare: FAIL call c1 (tool " + tool + ")\nsecond line"
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, raw := range []string{"\x1b", "\x07", "\u202e", "\u009b"} {
		if strings.Contains(out, raw) {
			t.Fatalf("report printed %q raw:\n%q", raw, out)
		}
	}
	if strings.Count(out, `x\x1b[2J\x07\u202etxt\u009b`) != 2 || !strings.Contains(out, ")\nsecond line") {
		t.Fatalf("report:\n%s", out)
	}
}

func TestToolsTextEscapes(t *testing.T) {
	res := &ToolsResult{
		Tools:    []ToolRow{{Name: "t\x1b[2J", Decision: "allow", Warning: "a destructive tool allowed without a person's approval"}},
		Failures: []ServerFailure{{Server: "s\x07", Error: "the server answered an error: \x1b]0;owned\x07"}},
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `t\x1b[2J`) || !strings.Contains(out, `s\x07`) ||
		!strings.Contains(out, `\x1b]0;owned\x07`) {
		t.Fatalf("tools:\n%q", out)
	}
}
