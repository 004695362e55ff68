package approval

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// Redact returns the arguments as a person may see them: valid JSON with
// secret-looking values replaced. Package policy provides the executor's
// rules; [RedactSecrets] is the default.
type Redact func(args []byte) []byte

// Redacted is the text that stands for a value left out.
const Redacted = "[redacted]"

var (
	secretValue = regexp.MustCompile(`^(?i:bearer|basic)\s|^(sk|pk|rk)[-_]|^gh[pousr]_|^xox[abpr]-|^AKIA[0-9A-Z]{16}$|^eyJ[A-Za-z0-9_-]+\.|-----BEGIN`)
)

// fallback is the redactor of RedactSecrets: the built-in detectors under a
// salt of this process (its tags are not kept anywhere; RedactSecrets shows
// none).
var fallback = func() *redact.Redactor {
	r, err := redact.New(redact.NewSalt(), redact.Options{})
	if err != nil {
		panic(err) // the built-in options with a fresh salt always build
	}
	return r
}()

// RedactSecrets replaces the value of every member whose name is a
// secret's ([redact.IsSecretName]: password, token, apiKey, secretAccessKey,
// …, but not max_tokens or secretary) and every text that looks like a
// credential (a bearer header, a JWT, a PEM block, well-known key prefixes,
// and whatever the detectors of package redact find in it) with
// [Redacted]. A member name in which a detector finds a secret is shown by
// its tag. Arguments that are not JSON become the text "[arguments not
// shown]". It is the default for a hub given no Redact; the executor gives
// its own (package redact's, under the copy's salt).
func RedactSecrets(args []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []byte(`"[arguments not shown]"`)
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return []byte(`"[arguments not shown]"`)
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			name := fallback.Name(k)
			if redact.IsSecretName(k) {
				out[name] = Redacted
			} else {
				out[name] = redactValue(e)
			}
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = redactValue(e)
		}
	case string:
		if secretValue.MatchString(strings.TrimSpace(x)) || len(fallback.Find(x)) > 0 {
			return Redacted
		}
	}
	return v
}

func (h *Hub) shownArguments(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	r := h.o.Redact
	if r == nil {
		r = RedactSecrets
	}
	return json.RawMessage(r(raw))
}
