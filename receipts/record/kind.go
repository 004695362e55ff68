package record

import (
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// Kind is a kind of record.
type Kind string

// The kinds of record.
const (
	Slip             Kind = "slip"
	Stub             Kind = "stub"
	Countersignature Kind = "countersignature"
	Refusal          Kind = "refusal"
	Approval         Kind = "approval"
	Cancellation     Kind = "cancellation"
	Acknowledgement  Kind = "acknowledgement"
	Terms            Kind = "terms"
	Vouching         Kind = "vouching"
	Withdrawal       Kind = "withdrawal"
	Pass             Kind = "pass"
	Seal             Kind = "seal"
)

// PasskeyAlg is the "alg" of the protected header of passkey-signed kinds.
const PasskeyAlg = "prova.red/webauthn/v0"

// header is one of the 22 protected headers the format knows.
type header struct {
	kind Kind
	alg  string
	text string // decoded, compared byte for byte
	b64  string // as it stands in "protected"
}

type kindInfo struct {
	contentType string
	passkey     bool
	headers     []header // in signature order
}

var kinds = map[Kind]*kindInfo{}

// knownHeaders maps each of the 22 decoded protected headers to its kind and alg.
var knownHeaders = map[string]header{}

func init() {
	add := func(k Kind, passkey bool, algs ...string) {
		info := &kindInfo{contentType: "provared." + string(k) + ".v0", passkey: passkey}
		for _, alg := range algs {
			// Member order is typ then alg, which is not canonical order:
			// these exact texts are written and compared.
			text := `{"typ":"vnd.provared.` + string(k) + `.v0+json","alg":"` + alg + `"}`
			h := header{kind: k, alg: alg, text: text, b64: canon.B64([]byte(text))}
			info.headers = append(info.headers, h)
			knownHeaders[text] = h
		}
		kinds[k] = info
	}
	add(Slip, true, PasskeyAlg)
	add(Stub, false, jwk.KeySetAlgs...)
	add(Countersignature, false, jwk.KeySetAlgs...)
	add(Approval, true, PasskeyAlg)
	add(Refusal, false, jwk.KeySetAlgs...)
	add(Terms, false, jwk.KeySetAlgs...)
	add(Cancellation, true, PasskeyAlg)
	add(Acknowledgement, false, jwk.KeySetAlgs...)
	add(Vouching, false, jwk.KeySetAlgs...)
	add(Withdrawal, false, jwk.KeySetAlgs...)
	add(Pass, false, jwk.KeySetAlgs...)
	add(Seal, false, jwk.SealAlgs...)
}

// ContentType returns the "type" the content of a kind carries
// ("provared.stub.v0", ...), or "" for an unknown kind.
func (k Kind) ContentType() string {
	if info, ok := kinds[k]; ok {
		return info.contentType
	}
	return ""
}

// Passkey reports whether the kind is signed by a person's passkey (slip,
// approval, cancellation).
func (k Kind) Passkey() bool {
	info, ok := kinds[k]
	return ok && info.passkey
}

// Known reports whether k is one of the twelve kinds.
func (k Kind) Known() bool { _, ok := kinds[k]; return ok }

// ProtectedHeaders returns the protected headers of a kind, in base64url,
// in signature order.
func (k Kind) ProtectedHeaders() []string {
	info, ok := kinds[k]
	if !ok {
		return nil
	}
	out := make([]string, len(info.headers))
	for i, h := range info.headers {
		out[i] = h.b64
	}
	return out
}
