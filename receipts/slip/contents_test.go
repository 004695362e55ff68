package slip

import (
	"encoding/json"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

type contentCase struct {
	Name     string          `json:"name"`
	Content  json.RawMessage `json:"content"`
	Expected expected        `json:"expected"`
}

func runContentVectors(t *testing.T, file string, validate func(any) error) {
	for i, raw := range readVectors(t, file) {
		var c contentCase
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		err := validate(jsonValue(t, c.Content))
		if c.Expected.Refused == nil {
			if err != nil {
				t.Errorf("%d %s: refused with %v, want ok", i, c.Name, err)
			}
			continue
		}
		if got := problem.Code(err); got != c.Expected.Refused.Code {
			t.Errorf("%d %s: code %q (%v), want %q (%s)", i, c.Name, got, err, c.Expected.Refused.Code, c.Expected.Refused.Message)
		}
	}
}

func TestApprovalContentVectors(t *testing.T) {
	runContentVectors(t, "approval-contents.json", ValidateApprovalValue)
}

func TestCancellationContentVectors(t *testing.T) {
	runContentVectors(t, "cancellation-contents.json", ValidateCancellationValue)
}
