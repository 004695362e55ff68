package record

import (
	"slices"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// CheckedSigner is a signer that vouches for its own signatures: every
// signature Sign returns without an error checks against Keys(). A
// jwk.LocalSigner is one (it signs with the private keys of the very key
// set it reports); a signer that signs elsewhere is one only if it checks
// each signature as it arrives (keys.TransitSigner does); a wrapper is one
// only if what it wraps is (SignaturesChecked of it) and it hands the
// signatures on unchanged. A signer that does not say so is not trusted:
// Sign checks each of its signatures.
type CheckedSigner interface {
	jwk.Signer
	SignaturesChecked() bool
}

// SignaturesChecked reports whether s vouches for its own signatures.
func SignaturesChecked(s jwk.Signer) bool {
	switch c := s.(type) {
	case *jwk.LocalSigner:
		return c != nil
	case CheckedSigner:
		return c.SignaturesChecked()
	}
	return false
}

// Signed is a hybrid record written by SignChecked in this process: each
// of its signatures was made here with a private key this process holds,
// or came from a signer elsewhere and was checked as it arrived. The book
// appends it without checking its signatures again (it still checks that
// the keys are the ones the slip names, and everything else about the
// line). Only SignChecked makes one: its fields are unexported, a zero
// Signed holds nothing, and nothing read from a file or from the network
// can become one.
type Signed struct{ p *signed }

type signed struct {
	rec      Record // never handed out: Record returns a copy
	keys     jwk.KeySet
	envelope string // the canonical envelope, built once; the record's texts are parts of it
}

// IsZero reports whether s holds no record (it was not made by SignChecked).
func (s Signed) IsZero() bool { return s.p == nil }

// Record returns a copy of the record (its content map is shared: read
// it, never change it). nil for a zero Signed.
func (s Signed) Record() *Record {
	if s.p == nil {
		return nil
	}
	r := s.p.rec
	r.Signatures = slices.Clone(r.Signatures)
	r.ContentText = slices.Clone(r.ContentText)
	return &r
}

// Fingerprint is the record's fingerprint; "" for a zero Signed.
func (s Signed) Fingerprint() string {
	if s.p == nil {
		return ""
	}
	return s.p.rec.Fingerprint
}

// Kind is the record's kind; "" for a zero Signed.
func (s Signed) Kind() Kind {
	if s.p == nil {
		return ""
	}
	return s.p.rec.Kind
}

// Keys is the key set that signed the record.
func (s Signed) Keys() jwk.KeySet {
	if s.p == nil {
		return jwk.KeySet{}
	}
	return s.p.keys
}

// AppendEnvelope appends the record's envelope in canonical JSON (the
// text canon.Marshal(Record().Value()) gives) to dst.
func (s Signed) AppendEnvelope(dst []byte) []byte {
	if s.p == nil {
		return dst
	}
	return append(dst, s.p.envelope...)
}

// EnvelopeLen is the length of the text AppendEnvelope appends.
func (s Signed) EnvelopeLen() int {
	if s.p == nil {
		return 0
	}
	return len(s.p.envelope)
}
