package cli

import (
	"os"
	"strings"
	"testing"
)

// Before any executor has started with the settings, the queue folder is
// not there yet (the start makes it): nothing waits, which approve says
// with exit 0, as a list and as JSON.
func TestApproveBeforeAnyStart(t *testing.T) {
	config, queue := approveFolder(t)
	if err := os.Remove(queue); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "approve", "--config", config)
	if code != ExitOK || !strings.Contains(out, "nothing waits for approval in "+queue) {
		t.Fatalf("approve exits %d:\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = run(t, "approve", "--config", config, "--json")
	v := oneObject(t, out)
	if waiting, ok := v["waiting"].([]any); code != ExitOK || v["queue"] != queue || !ok || len(waiting) != 0 {
		t.Fatalf("approve --json exits %d:\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(queue); !os.IsNotExist(err) {
		t.Errorf("approve made the queue folder: %v", err)
	}
}
