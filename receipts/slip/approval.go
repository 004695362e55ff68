package slip

import (
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Request is what a stub, an approval and a refusal say was done or is
// asked for: the action, and where present the amount, the service and the
// documents.
type Request struct {
	Action  string
	Amount  *record.Amount
	With    string
	Details []record.Detail
}

// Approval is an approval's content, read and validated (format
// description, section 17): the person's passkey yes to exactly one action.
type Approval struct {
	Record *record.Record
	ID     string
	Slip   string // the slip's fingerprint
	Request
	When time.Time
}

// ValidateApproval confirms every member of an approval's content. The
// "type" member is not read here; the envelope check reads it.
func ValidateApproval(c map[string]any) error {
	_, err := readApproval(c)
	return err
}

// ValidateApprovalValue is ValidateApproval for any value (a list, null...
// is refused with "bad-field").
func ValidateApprovalValue(v any) error {
	_, err := readApproval(v)
	return err
}

func readApproval(v any) (*Approval, error) {
	m, err := members(v, []string{"action", "id", "slip", "type", "when"}, []string{"amount", "details", "with"}, "approval")
	if err != nil {
		return nil, err
	}
	a := &Approval{}
	if a.ID, err = idField(m["id"], "id"); err != nil {
		return nil, err
	}
	if a.Slip, err = fingerprintText(m["slip"], "slip"); err != nil {
		return nil, err
	}
	if a.Request, err = ReadRequest(m); err != nil {
		return nil, err
	}
	if a.When, err = timeField(m["when"], "when"); err != nil {
		return nil, err
	}
	return a, nil
}

// ReadRequest confirms the members that say what was done or is asked for
// (the reference's validateRequest): action, and optional amount, with and
// details.
func ReadRequest(m map[string]any) (Request, error) {
	var r Request
	var err error
	if r.Action, err = actionName(m["action"], "action"); err != nil {
		return r, err
	}
	if v, ok := m["amount"]; ok {
		am, err := members(v, []string{"unit", "value"}, nil, "amount")
		if err != nil {
			return r, err
		}
		u, err := unit(am["unit"], "amount.unit")
		if err != nil {
			return r, err
		}
		val, err := wholeNumber(am["value"], "amount.value")
		if err != nil {
			return r, err
		}
		r.Amount = &record.Amount{Unit: u, Value: val}
	}
	if v, ok := m["with"]; ok {
		if r.With, err = shortName(v, "with"); err != nil {
			return r, err
		}
	}
	if v, ok := m["details"]; ok {
		items, err := list(v, 1, 32, "details")
		if err != nil {
			return r, err
		}
		for i, item := range items {
			p := fmt.Sprintf("details[%d]", i)
			dm, err := members(item, []string{"name", "sha256"}, nil, p)
			if err != nil {
				return r, err
			}
			name, err := label(dm["name"], p+".name")
			if err != nil {
				return r, err
			}
			sum, err := fingerprintText(dm["sha256"], p+".sha256")
			if err != nil {
				return r, err
			}
			r.Details = append(r.Details, record.Detail{Name: name, SHA256: sum})
		}
	}
	return r, nil
}

// ReadApproval reads an approval record (v is the envelope as a canonical
// value) and validates its content. It does not check the passkey
// signature: VerifyIssued does, against the slip the approval names.
func ReadApproval(v any) (*Approval, error) {
	r, err := record.Parse(v, "approval")
	if err != nil {
		return nil, err
	}
	a, err := readApproval(r.Content)
	if err != nil {
		return nil, err
	}
	a.Record = r
	return a, nil
}

// Cancellation is a cancellation's content (format description, section
// 22): the person ends a slip.
type Cancellation struct {
	Record *record.Record
	ID     string
	Slip   string
	When   time.Time
}

// ValidateCancellation confirms every member of a cancellation's content.
// The "type" member is not read here; the envelope check reads it.
func ValidateCancellation(c map[string]any) error {
	_, err := readCancellation(c)
	return err
}

// ValidateCancellationValue is ValidateCancellation for any value.
func ValidateCancellationValue(v any) error {
	_, err := readCancellation(v)
	return err
}

func readCancellation(v any) (*Cancellation, error) {
	m, err := members(v, []string{"id", "slip", "type", "when"}, nil, "cancellation")
	if err != nil {
		return nil, err
	}
	c := &Cancellation{}
	if c.ID, err = idField(m["id"], "id"); err != nil {
		return nil, err
	}
	if c.Slip, err = fingerprintText(m["slip"], "slip"); err != nil {
		return nil, err
	}
	if c.When, err = timeField(m["when"], "when"); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadCancellation reads a cancellation record and validates its content.
// It does not check the passkey signature: VerifyIssued does.
func ReadCancellation(v any) (*Cancellation, error) {
	r, err := record.Parse(v, "cancellation")
	if err != nil {
		return nil, err
	}
	c, err := readCancellation(r.Content)
	if err != nil {
		return nil, err
	}
	c.Record = r
	return c, nil
}

// RequestText is what an approval and a stub must agree on, as canonical
// JSON: the action, and the amount, the service and the documents, each
// present in both or in neither (the reference's requestOf). c is the
// content of an approval or of a stub.
func RequestText(c map[string]any) ([]byte, error) {
	r := map[string]any{"action": c["action"]}
	for _, name := range []string{"amount", "details", "with"} {
		if v, ok := c[name]; ok {
			r[name] = v
		}
	}
	return canon.Marshal(r)
}
