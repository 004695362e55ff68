package slip

import (
	"errors"
	"fmt"
	"slices"

	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Options tell Check what the checker trusts and holds.
type Options struct {
	// IssuerKeys are the thumbprints of the passkeys the checker trusts. nil:
	// the key is not compared (a note says so). Non-nil, even empty: a key
	// not among them is "issuer-not-expected", reported after the signature.
	IssuerKeys []string
	// WithoutMethods are signing methods to treat as not built in (the
	// signature state is then "unavailable", never a pass).
	WithoutMethods []string
	// Disclosures are disclosures handed over beside records, by the
	// fingerprint of the record they belong to (each a list of texts).
	Disclosures map[string]any
	// Attached are disclosures that come with this slip (a page of a Show);
	// nil when none come with it. Used together with those beside it.
	Attached any
}

// The signature states a Result reports.
const (
	StateUnchecked   = "unchecked"
	StateInvalid     = "invalid"
	StateValid       = "valid"
	StateUnavailable = "unavailable"
)

// SignatureCheck says how the slip's passkey signature was checked.
type SignatureCheck struct {
	Method string // "passkey (ES256)"; "passkey" when the key could not be read
	Alg    string // "" when the key could not be read
	State  string // unchecked, invalid, valid or unavailable
}

// Result is what checking one slip found (the reference's SlipCheck).
type Result struct {
	Kind        string // "slip"
	Fingerprint string // "" when the record could not be read
	Problems    []*problem.Error
	Notes       []string
	Signature   SignatureCheck
	IssuerKey   string         // thumbprint of the passkey, "" when not read
	Content     map[string]any // with revealed fields in place; nil if not read
	Covered     []string
	// DisclosureProblems say why the disclosures handed over were not used;
	// the slip was then checked with those fields covered.
	DisclosureProblems []*problem.Error
}

// Sound reports a slip with no problem whose signature was checked here.
func (r Result) Sound() bool { return len(r.Problems) == 0 && r.Signature.State == StateValid }

// The notes Check may add.
const (
	NoteNotCompared = "the issuer's key was not compared with a key you already trust; the name on the slip is only a label"
	noteUnavailable = "this device cannot check the passkey's signing method (%s)"
)

// Check checks one slip record (v is the envelope as a canonical value)
// in the reference's order (format description, section 4.4): the
// envelope, covered fields, the content, the passkey signature against the
// issuer the slip names, then the trusted keys.
//
// The *Slip is returned whenever the content could be read and validated,
// even when the signature then failed or was not checked: callers must rely
// on it only when the Result has no problems (Sound for a checked signature).
func Check(v any, opts Options) (*Slip, Result) {
	res := Result{Kind: "slip", Signature: SignatureCheck{Method: "passkey", State: StateUnchecked}}
	s, err := check(v, opts, &res)
	if err != nil {
		res.Problems = append(res.Problems, asProblem(err))
	}
	return s, res
}

func check(v any, opts Options, res *Result) (*Slip, error) {
	r, err := record.Parse(v, "slip")
	if err != nil {
		return nil, err
	}
	res.Fingerprint = r.Fingerprint

	var beside any = []any{}
	if d, ok := opts.Disclosures[r.Fingerprint]; ok {
		beside = d
	}
	forThis := beside
	if opts.Attached != nil {
		forThis = opts.Attached
		if att, ok := opts.Attached.([]any); ok {
			bl, bIsList := beside.([]any)
			if !bIsList {
				forThis = beside
			} else if len(bl) > 0 {
				merged := slices.Clone(att)
				for _, d := range bl {
					if !slices.ContainsFunc(att, func(a any) bool { return sameValue(a, d) }) {
						merged = append(merged, d)
					}
				}
				forThis = merged
			}
		}
	}

	s, err := reveal(r.Content, forThis)
	if err != nil {
		// What a slip is must not depend on what is handed over with it: if
		// it is sound with its fields covered, the disclosures are at fault.
		if l, ok := forThis.([]any); ok && len(l) == 0 {
			return nil, err
		}
		first := err
		if s, err = reveal(r.Content, []any{}); err != nil {
			return nil, err
		}
		res.DisclosureProblems = append(res.DisclosureProblems, asProblem(first))
	}
	return finish(r, s, opts, res)
}

// sameValue is JavaScript's Array.prototype.includes comparison for the
// values a disclosure list may hold: texts and numbers by value, objects
// and lists never equal to another value.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	}
	return false
}

func reveal(payload map[string]any, given any) (*Slip, error) {
	content, places, named, err := uncover(payload, given)
	if err != nil {
		return nil, err
	}
	return readContent(content, places, named)
}

func finish(r *record.Record, s *Slip, opts Options, res *Result) (*Slip, error) {
	s.Record = r
	s.Fingerprint = r.Fingerprint
	res.Covered = s.Covered
	res.Content = s.Content
	res.Signature.Method = fmt.Sprintf("passkey (%s)", s.Issuer.Key.Alg)
	res.Signature.Alg = s.Issuer.Key.Alg
	res.IssuerKey = s.Issuer.Key.Thumbprint

	res.Signature.State = StateInvalid
	state, err := passkey.Check(s.Issuer.Key, s.Issuer.Origin, s.Issuer.RPID, r, opts.WithoutMethods)
	if err != nil {
		return s, err
	}
	res.Signature.State = string(state)
	if state == passkey.Unavailable {
		res.Notes = append(res.Notes, fmt.Sprintf(noteUnavailable, s.Issuer.Key.Alg))
	}
	if opts.IssuerKeys != nil {
		if !slices.Contains(opts.IssuerKeys, res.IssuerKey) {
			return s, problem.New("issuer-not-expected", "the slip was signed by a passkey other than the ones expected")
		}
	} else {
		res.Notes = append(res.Notes, NoteNotCompared)
	}
	return s, nil
}

// asProblem keeps a *problem.Error and turns anything else into
// "check-failed", which is never a pass.
func asProblem(err error) *problem.Error {
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe
	}
	return problem.New(problem.CheckFailed, "the checker met something it did not expect here; this is treated as not intact")
}

// VerifyIssued checks the passkey signature of an approval or a
// cancellation (or a slip) against the issuer a slip names.
func VerifyIssued(s *Slip, r *record.Record) error {
	return passkey.Verify(s.Issuer.Key, s.Issuer.Origin, s.Issuer.RPID, r)
}
