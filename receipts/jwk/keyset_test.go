package jwk

import (
	"testing"
)

// TestKeySetFingerprintKnownAnswers: books.json reports, for each refusal,
// terms and vouching record, the fingerprint of the key set that signed it
// ("signer"), which is the content's by.keys. Every one must reproduce.
func TestKeySetFingerprintKnownAnswers(t *testing.T) {
	f := readVectors(t, "books.json")
	found := 0
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			signer, ok := x["signer"].(string)
			content, _ := x["content"].(map[string]any)
			by, _ := content["by"].(map[string]any)
			if ok && by != nil {
				found++
				ks, err := CheckKeySet(by["keys"])
				if err != nil {
					t.Errorf("entry %v: %v", x["index"], err)
				} else if got := ks.Fingerprint(); got != signer {
					t.Errorf("entry %v: key set fingerprint %s, want %s", x["index"], got, signer)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, raw := range f.Cases {
		walk(jsonValue(t, raw))
	}
	if found == 0 {
		t.Fatal("no key set fingerprint found in books.json")
	}
}
