package cli

import (
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
)

// The report command counts the copy and ends with compare's summary of
// the copy against the book, under the copy key it loaded once.
func TestReportEndsWithCompare(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	s1 := stub(t, e, 1, s0.Stub.Fingerprint, "call-2")
	bookWithSlip(t, e, s0, s1)
	copyOf(t, e, []string{"call-1", "call-2"}, []book.Line{s0, s1})

	code, out, errOut := run(t, "report", "--config", e.SettingsPath)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "\ncompare: OK 2 calls, 2 match; copy ok; book intact\n") {
		t.Errorf("no compare summary in:\n%s", out)
	}
	if !strings.Contains(out, "echo ") {
		t.Errorf("the tool echo is not counted:\n%s", out)
	}
}
