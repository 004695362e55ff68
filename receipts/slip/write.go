package slip

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Prepared is a passkey-signed record's content, ready for a passkey: the
// challenge it must sign is SHA-256 of protected "." payload (format
// description, section 4.2, steps 1 to 3).
type Prepared struct {
	Kind         record.Kind
	ContentBytes []byte
	PayloadB64   string
	ProtectedB64 string
	Challenge    []byte
	Fingerprint  string // of the content: what a stub names as its approval
}

// reservedForPasskey is the room left for what a passkey returns, so the
// signed record still fits the size limit.
const reservedForPasskey = 2048

// Prepare writes content canonically and builds the challenge for a
// passkey-signed kind. The content is not validated here.
func Prepare(kind record.Kind, content map[string]any) (*Prepared, error) {
	protected, ok := passkey.ProtectedHeader(kind)
	if !ok {
		return nil, fmt.Errorf("preparing a %s: not a passkey-signed kind", kind)
	}
	text, err := canon.Marshal(content)
	if err != nil {
		return nil, err
	}
	payload := canon.B64(text)
	if len(payload)+reservedForPasskey > record.MaxRecordSize {
		return nil, problem.New("too-large", "the %s would be larger than a record may be", kind)
	}
	challenge := sha256.Sum256([]byte(protected + "." + payload))
	return &Prepared{
		Kind: kind, ContentBytes: text, PayloadB64: payload, ProtectedB64: protected,
		Challenge: challenge[:], Fingerprint: canon.Fingerprint(text),
	}, nil
}

// Assemble puts a passkey's answer with prepared content: the signed record
// as a canonical value, the passkey's values stored exactly as returned. A
// record larger than the format allows is "too-large".
func Assemble(p *Prepared, a passkey.Assertion) (map[string]any, error) {
	v := passkey.Envelope(p.PayloadB64, p.ProtectedB64, a)
	if record.Size(v) > record.MaxRecordSize {
		return nil, problem.New("too-large", "the record would be larger than %d bytes", record.MaxRecordSize)
	}
	return v, nil
}

// SlipContent fills in what a writer adds to a slip's fields: "type", an
// "id" when absent, and empty "requires" and "never" when absent. The
// fields map is not changed.
func SlipContent(fields map[string]any) map[string]any {
	c := map[string]any{"requires": []any{}, "never": []any{}}
	for k, v := range fields {
		c[k] = v
	}
	c["type"] = record.Slip.ContentType()
	if _, ok := c["id"]; !ok {
		c["id"] = canon.NewID()
	}
	return c
}

// Signer is a passkey that answers a challenge and names its public key:
// in this project only the development passkey (passkey.DevPasskey), for
// tests and the demo.
type Signer interface {
	Assert(challenge []byte) (passkey.Assertion, error)
	Key() *jwk.Key
}

// WriteSlip validates a slip's content (see SlipContent for what is filled
// in; the issuer must name the signer's key, origin and rpId), has the
// passkey sign it, and checks the result as a reader would, trusting that
// passkey's key. The parsed slip holds the record (Slip.Record.Value() is
// the book line's "slip").
func WriteSlip(fields map[string]any, d Signer) (*Slip, error) {
	content := SlipContent(fields)
	if err := ValidateContent(content); err != nil {
		return nil, fmt.Errorf("writing a slip: %w", err)
	}
	v, err := sign(record.Slip, content, d)
	if err != nil {
		return nil, fmt.Errorf("writing a slip: %w", err)
	}
	s, res := Check(v, Options{IssuerKeys: []string{d.Key().Thumbprint}})
	if len(res.Problems) > 0 || s == nil {
		return nil, fmt.Errorf("writing a slip: the signed slip does not check: %w", res.Problems[0])
	}
	return s, nil
}

func sign(kind record.Kind, content map[string]any, d Signer) (map[string]any, error) {
	p, err := Prepare(kind, content)
	if err != nil {
		return nil, err
	}
	a, err := d.Assert(p.Challenge)
	if err != nil {
		return nil, err
	}
	return Assemble(p, a)
}

// ApprovalFields are what an approval states (format description, section
// 17). ID is made when empty; Details empty means none.
type ApprovalFields struct {
	ID      string
	Slip    string // the slip's fingerprint
	Action  string
	Amount  *record.Amount
	With    string
	Details []record.Detail
	When    time.Time
}

// Content is the approval's content, as the reference's writer builds it.
func (f ApprovalFields) Content() map[string]any {
	id := f.ID
	if id == "" {
		id = canon.NewID()
	}
	c := map[string]any{
		"type": record.Approval.ContentType(), "id": id, "slip": f.Slip,
		"action": f.Action, "when": canon.FormatTime(f.When),
	}
	if f.Amount != nil {
		c["amount"] = f.Amount.Canonical()
	}
	if f.With != "" {
		c["with"] = f.With
	}
	if len(f.Details) > 0 {
		c["details"] = record.DetailsValue(f.Details)
	}
	return c
}

// PrepareApproval builds and validates an approval's content and the
// challenge the person's passkey must sign. Prepared.Fingerprint is what
// the agent's stub must name as its approval.
func PrepareApproval(f ApprovalFields) (*Prepared, error) {
	c := f.Content()
	if err := ValidateApproval(c); err != nil {
		return nil, err
	}
	return Prepare(record.Approval, c)
}

// WriteApproval prepares an approval, has the passkey sign it and reads it
// back.
func WriteApproval(f ApprovalFields, d Signer) (*Approval, error) {
	p, err := PrepareApproval(f)
	if err != nil {
		return nil, fmt.Errorf("writing an approval: %w", err)
	}
	a, err := d.Assert(p.Challenge)
	if err != nil {
		return nil, fmt.Errorf("writing an approval: %w", err)
	}
	v, err := Assemble(p, a)
	if err != nil {
		return nil, fmt.Errorf("writing an approval: %w", err)
	}
	return ReadApproval(v)
}

// CancellationFields are what a cancellation states (section 22). ID is
// made when empty.
type CancellationFields struct {
	ID   string
	Slip string
	When time.Time
}

// Content is the cancellation's content.
func (f CancellationFields) Content() map[string]any {
	id := f.ID
	if id == "" {
		id = canon.NewID()
	}
	return map[string]any{"type": record.Cancellation.ContentType(), "id": id, "slip": f.Slip, "when": canon.FormatTime(f.When)}
}

// PrepareCancellation builds and validates a cancellation's content and
// the challenge the person's passkey must sign.
func PrepareCancellation(f CancellationFields) (*Prepared, error) {
	c := f.Content()
	if err := ValidateCancellation(c); err != nil {
		return nil, err
	}
	return Prepare(record.Cancellation, c)
}

// WriteCancellation prepares a cancellation, has the passkey sign it and
// reads it back.
func WriteCancellation(f CancellationFields, d Signer) (*Cancellation, error) {
	p, err := PrepareCancellation(f)
	if err != nil {
		return nil, fmt.Errorf("writing a cancellation: %w", err)
	}
	a, err := d.Assert(p.Challenge)
	if err != nil {
		return nil, fmt.Errorf("writing a cancellation: %w", err)
	}
	v, err := Assemble(p, a)
	if err != nil {
		return nil, fmt.Errorf("writing a cancellation: %w", err)
	}
	return ReadCancellation(v)
}
