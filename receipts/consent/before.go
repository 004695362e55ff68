package consent

import "github.com/seed-6e06167c/mcp-executor/receipts/book"

// OnlyApprovalMissing reports whether the check before acting refused an
// action for one reason alone: the slip asks for the person's approval and
// none was handed over ("approval-missing", refusal reason
// "needs-approval"). Only then does the executor hold the call and ask
// (the reference connector asks once, and only in this case); any other
// finding refuses it at once.
func OnlyApprovalMissing(d book.Decision) bool {
	return !d.Allowed && len(d.Problems) == 0 && len(d.Breaches) == 1 && d.Breaches[0].Code == "approval-missing"
}
