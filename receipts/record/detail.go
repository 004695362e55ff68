package record

import "github.com/seed-6e06167c/mcp-executor/receipts/canon"

// Detail names one document by its label and fingerprint, as a stub's,
// an approval's and the executor's copy's details do: {name, sha256}.
type Detail struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"` // canon.Fingerprint of the document
}

// TextDetail is the detail of a text document: its label and the
// fingerprint of the text's UTF-8 bytes.
func TextDetail(label, text string) Detail {
	return Detail{Name: label, SHA256: canon.Fingerprint([]byte(text))}
}

// Value is the detail as a canonical value.
func (d Detail) Value() map[string]any {
	return map[string]any{"name": d.Name, "sha256": d.SHA256}
}

// DetailsValue is a list of details as a canonical value.
func DetailsValue(ds []Detail) []any {
	out := make([]any, len(ds))
	for i, d := range ds {
		out[i] = d.Value()
	}
	return out
}

// Amount is an amount in a unit, as a stub, a refusal, an approval and the
// executor's copy state it: {unit, value}.
type Amount struct {
	Unit  string `json:"unit"`
	Value int64  `json:"value"`
}

// Canonical is the amount as a canonical value. (Amount's field is named
// Value, so the method is not.)
func (a Amount) Canonical() map[string]any {
	return map[string]any{"unit": a.Unit, "value": a.Value}
}
