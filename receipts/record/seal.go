package record

import "github.com/seed-6e06167c/mcp-executor/receipts/jwk"

// ValidateSeal confirms every member of a seal's content (format
// description §21.1; the reference's validateSealContent), in its order of
// checks: the members, id, by (its name a label, its keys a recorder's
// three), size (1 or more), root, previous if present, and when. It does
// not look at "type": the envelope does. Faults give "bad-field", or
// "bad-key" for the keys.
func ValidateSeal(v any) error {
	c, err := members(v, []string{"by", "id", "root", "size", "type", "when"}, []string{"previous"}, "seal")
	if err != nil {
		return err
	}
	if err := id(c["id"], "id"); err != nil {
		return err
	}
	by, err := members(c["by"], []string{"keys", "name"}, nil, "by")
	if err != nil {
		return err
	}
	if err := label(by["name"], "by.name"); err != nil {
		return err
	}
	if _, err := jwk.CheckSealKeySetAt(by["keys"], "by.keys"); err != nil {
		return err
	}
	size, err := wholeNumber(c["size"], "size")
	if err != nil {
		return err
	}
	if size < 1 {
		return fail("size", "must be 1 or more")
	}
	if err := fingerprint(c["root"], "root"); err != nil {
		return err
	}
	if has(c, "previous") {
		if err := fingerprint(c["previous"], "previous"); err != nil {
			return err
		}
	}
	return timeText(c["when"], "when")
}
