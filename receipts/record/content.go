package record

import (
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// RefusalReasons are the reasons a service may give for a refusal, in the
// reference's order.
var RefusalReasons = []string{
	"not-in-slip",
	"over-limit",
	"outside-valid-time",
	"slip-not-sound",
	"needs-approval",
	"against-terms",
	"other",
}

// Content checks, with the reference's rules, order and codes. None of them
// reads "type": the envelope check (Parse) confirms it.

// ValidateStub confirms every member of a stub's content (§5.1).
func ValidateStub(c map[string]any) error { return validateStub(c) }

// ValidateCountersignature confirms a countersignature's content (§6):
// exactly stub, type and when.
func ValidateCountersignature(c map[string]any) error { return validateCountersignature(c) }

// ValidateRefusal confirms every member of a refusal's content (§18). A
// faulty key set in "by" gives "bad-key".
func ValidateRefusal(c map[string]any) error { return validateRefusal(c) }

// ValidateAcknowledgement confirms every member of an acknowledgement's
// content (§26).
func ValidateAcknowledgement(c map[string]any) error { return validateAcknowledgement(c) }

func validateStub(v any) error {
	c, err := members(v, []string{"action", "id", "seq", "slip", "type", "when"},
		[]string{"amount", "approval", "details", "pass", "previous", "terms", "with"}, "stub")
	if err != nil {
		return err
	}
	if err := id(c["id"], "id"); err != nil {
		return err
	}
	if err := fingerprint(c["slip"], "slip"); err != nil {
		return err
	}
	seq, err := wholeNumber(c["seq"], "seq")
	if err != nil {
		return err
	}
	if seq == 0 {
		if has(c, "previous") {
			return fail("previous", "the first stub under a slip names no stub before it")
		}
	} else {
		if !has(c, "previous") {
			return fail("previous", "is missing")
		}
		if err := fingerprint(c["previous"], "previous"); err != nil {
			return err
		}
	}
	if err := validateRequest(c); err != nil {
		return err
	}
	for _, name := range []string{"approval", "pass"} {
		if has(c, name) {
			if err := fingerprint(c[name], name); err != nil {
				return err
			}
		}
	}
	if has(c, "terms") {
		if err := fingerprint(c["terms"], "terms"); err != nil {
			return err
		}
		if !has(c, "with") {
			return fail("terms", "a stub that relies on the terms of a service must name the service")
		}
	}
	return timeText(c["when"], "when")
}

// validateRequest confirms the members that say what was done or asked for:
// the action, and where present the amount, the service and the documents.
// A stub, an approval and a refusal share them.
func validateRequest(c map[string]any) error {
	if err := actionName(c["action"], "action"); err != nil {
		return err
	}
	if err := validateAmount(c); err != nil {
		return err
	}
	if has(c, "with") {
		if err := shortName(c["with"], "with"); err != nil {
			return err
		}
	}
	if has(c, "details") {
		details, err := list(c["details"], 1, 32, "details")
		if err != nil {
			return err
		}
		for i, d := range details {
			path := fmt.Sprintf("details[%d]", i)
			dm, err := members(d, []string{"name", "sha256"}, nil, path)
			if err != nil {
				return err
			}
			if err := label(dm["name"], path+".name"); err != nil {
				return err
			}
			if err := fingerprint(dm["sha256"], path+".sha256"); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateAmount(c map[string]any) error {
	if !has(c, "amount") {
		return nil
	}
	a, err := members(c["amount"], []string{"unit", "value"}, nil, "amount")
	if err != nil {
		return err
	}
	if err := unit(a["unit"], "amount.unit"); err != nil {
		return err
	}
	_, err = wholeNumber(a["value"], "amount.value")
	return err
}

func validateCountersignature(v any) error {
	c, err := members(v, []string{"stub", "type", "when"}, nil, "countersignature")
	if err != nil {
		return err
	}
	if err := fingerprint(c["stub"], "stub"); err != nil {
		return err
	}
	return timeText(c["when"], "when")
}

func validateRefusal(v any) error {
	c, err := members(v, []string{"action", "by", "id", "reason", "slip", "type", "when"}, []string{"amount"}, "refusal")
	if err != nil {
		return err
	}
	if err := id(c["id"], "id"); err != nil {
		return err
	}
	if err := fingerprint(c["slip"], "slip"); err != nil {
		return err
	}
	if _, err := validateBy(c["by"]); err != nil {
		return err
	}
	// What was asked for is written as it was asked, even a reserved name
	// that is not on the shared list: that may be why it was refused.
	if err := shortName(c["action"], "action"); err != nil {
		return err
	}
	if err := validateAmount(c); err != nil {
		return err
	}
	if r, ok := c["reason"].(string); !ok || !isRefusalReason(r) {
		return fail("reason", "must be one of the listed reasons")
	}
	return timeText(c["when"], "when")
}

// validateBy confirms a signer named in a record: {keys, name}.
func validateBy(v any) (jwk.KeySet, error) {
	by, err := members(v, []string{"keys", "name"}, nil, "by")
	if err != nil {
		return jwk.KeySet{}, err
	}
	if err := label(by["name"], "by.name"); err != nil {
		return jwk.KeySet{}, err
	}
	return jwk.CheckKeySetAt(by["keys"], "by.keys")
}

func isRefusalReason(r string) bool {
	for _, x := range RefusalReasons {
		if r == x {
			return true
		}
	}
	return false
}

func validateAcknowledgement(v any) error {
	c, err := members(v, []string{"cancellation", "id", "slip", "type", "when"}, []string{"pass"}, "acknowledgement")
	if err != nil {
		return err
	}
	if err := id(c["id"], "id"); err != nil {
		return err
	}
	if err := fingerprint(c["slip"], "slip"); err != nil {
		return err
	}
	if err := fingerprint(c["cancellation"], "cancellation"); err != nil {
		return err
	}
	if has(c, "pass") {
		if err := fingerprint(c["pass"], "pass"); err != nil {
			return err
		}
	}
	return timeText(c["when"], "when")
}
