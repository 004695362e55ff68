package consent

import (
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// PrepareCancellation builds the cancellation of the slip whose
// fingerprint is slipFingerprint, dated when, with a fresh id: the
// challenge the slip issuer's passkey must sign.
func PrepareCancellation(slipFingerprint string, when time.Time) (*slip.Prepared, error) {
	prep, err := slip.PrepareCancellation(slip.CancellationFields{Slip: slipFingerprint, When: when})
	if err != nil {
		return nil, fmt.Errorf("consent: preparing the cancellation of slip %s: %w", slipFingerprint, err)
	}
	return prep, nil
}

// CheckCancellation checks an assembled cancellation v against the signed
// slip s:
//
//   - the record and its content (the envelope's codes, "bad-field");
//   - "slip-missing": it cancels another slip;
//   - "cancellation-invalid": the passkey signature is not the slip
//     issuer's.
//
// A cancellation is honoured whatever its date: from the moment the
// executor reads it, no call under the slip is sent.
func CheckCancellation(v any, s *slip.Slip) (*slip.Cancellation, error) {
	if s == nil || s.Record == nil {
		return nil, problem.New(problem.CheckFailed, "consent: no signed slip to check the cancellation against")
	}
	c, err := slip.ReadCancellation(v)
	if err != nil {
		return nil, err
	}
	if c.Slip != s.Fingerprint {
		return nil, problem.New("slip-missing", "the cancellation is of another slip")
	}
	if err := slip.VerifyIssued(s, c.Record); err != nil {
		return nil, problem.New("cancellation-invalid", "the cancellation was not signed with the passkey the slip names (%s)", problem.Code(err))
	}
	return c, nil
}
