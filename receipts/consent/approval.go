package consent

import (
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// MaxApprovalLead is how much later than its stub an approval may be dated
// (the format's 300 seconds: "approval-dated-after-stub").
const MaxApprovalLead = 300 * time.Second

// Proposal is one held call as its stub will name it: the slip's
// fingerprint and the action, amount, service and documents (details). The
// stub of the approved call must carry exactly these, or the book reads
// "approval-mismatch".
type Proposal struct {
	Slip string // the slip's fingerprint
	slip.Request
}

// fields are the approval's fields for p, with a fresh id.
func (p Proposal) fields(when time.Time) slip.ApprovalFields {
	return slip.ApprovalFields{Slip: p.Slip, Action: p.Action, Amount: p.Amount, With: p.With, Details: p.Details, When: when}
}

// Content is the part of a stub's content that an approval must agree on
// (slip.RequestText compares it): action, and amount, with and details
// when present.
func (p Proposal) Content() map[string]any {
	c := p.fields(time.Unix(0, 0)).Content()
	delete(c, "id")
	delete(c, "slip")
	delete(c, "type")
	delete(c, "when")
	return c
}

// PrepareApproval builds the approval the person's passkey must sign for
// p, dated when (to the second), with a fresh id: its Challenge is what the
// passkey signs, its Fingerprint what the stub names as its approval. A
// proposal the format refuses gives the slip package's code ("bad-field").
func PrepareApproval(p Proposal, when time.Time) (*slip.Prepared, error) {
	prep, err := slip.PrepareApproval(p.fields(when))
	if err != nil {
		return nil, fmt.Errorf("consent: preparing the approval of %s: %w", p.Action, err)
	}
	return prep, nil
}

// Used reports whether an approval id was used before (by a stub in the
// book or a call in flight). Nil means none was.
type Used func(id string) bool

// CheckApproval checks an assembled approval v (the record as a canonical
// value) for the held call p under s (whose fingerprint p.Slip is), before
// the stub dated stubWhen is written, in the order the book's checker
// reads a stub's approval:
//
//   - the record and its content (the envelope's codes, "bad-field");
//   - "approval-mismatch": the approval names another slip, or another
//     action, amount, service or documents;
//   - "approval-reused": used says its id was used before;
//   - "approval-invalid": the passkey signature is not the slip issuer's
//     (wrong key, origin, rpId, challenge, no user verification...);
//   - "approval-dated-after-stub": it is dated more than 300 s after
//     stubWhen.
//
// Every refusal is a *problem.Error (problem.Code reads it).
func CheckApproval(v any, s *slip.Slip, p Proposal, stubWhen time.Time, used Used) (*slip.Approval, error) {
	if s == nil || s.Record == nil {
		return nil, problem.New(problem.CheckFailed, "consent: no signed slip to check the approval against")
	}
	a, err := slip.ReadApproval(v)
	if err != nil {
		return nil, err
	}
	if a.Slip != p.Slip {
		return nil, problem.New("approval-mismatch", "the approval was given under another slip")
	}
	got, err := slip.RequestText(a.Record.Content)
	if err != nil {
		return nil, err
	}
	want, err := slip.RequestText(p.Content())
	if err != nil {
		return nil, err
	}
	if string(got) != string(want) {
		return nil, problem.New("approval-mismatch", "the approval was given for another action, amount, service or documents")
	}
	if used != nil && used(a.ID) {
		return nil, problem.New("approval-reused", "this approval has already been used for another action")
	}
	if err := slip.VerifyIssued(s, a.Record); err != nil {
		return nil, problem.New("approval-invalid", "the approval was not signed with the passkey the slip names, or its passkey values do not check (%s)", problem.Code(err))
	}
	if a.When.After(stubWhen.Add(MaxApprovalLead)) {
		return nil, problem.New("approval-dated-after-stub", "the approval is dated more than 300 seconds after the action")
	}
	return a, nil
}

// ProposalOf reads back the proposal a prepared approval was built for
// (its content's slip, action, amount, with and details), as a channel that
// only holds the prepared approval needs it to check the signed one.
func ProposalOf(prep *slip.Prepared) (Proposal, error) {
	if prep == nil {
		return Proposal{}, problem.New(problem.CheckFailed, "consent: no prepared approval")
	}
	v, err := canon.Parse(prep.ContentBytes)
	if err != nil {
		return Proposal{}, err
	}
	m, ok := v.(map[string]any)
	if !ok || slip.ValidateApproval(m) != nil {
		return Proposal{}, problem.New("bad-field", "consent: the prepared content is not an approval's")
	}
	r, err := slip.ReadRequest(m)
	if err != nil {
		return Proposal{}, err
	}
	fp, _ := m["slip"].(string)
	return Proposal{Slip: fp, Request: r}, nil
}
