package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoRuns: the real binary's demo plays every step — the two held
// calls answered through the queue folder, one approved and one declined —
// checks every expectation, and its book and copy pass verify and compare.
func TestDemoRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	out, err := exec.Command(binary(t), "demo", "--dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"approved through the queue", "declined through the queue",
		"The demo answers it as a second terminal would", "--yes)", "--no)",
		"emailed the supplier", "a person declined this call",
		"compare: OK", "demo: every expectation held",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
}
