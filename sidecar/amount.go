package sidecar

import (
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Codes given to a call whose amount cannot be read (red.prova/codes and
// red.prova/refused).
const (
	CodeAmountUnreadable = "amount-unreadable"
	CodeDuplicateMember  = "duplicate-member"
)

// amountError is why an amount could not be read. The message names only
// the settings' pointer, never an argument value.
type amountError struct{ code, why string }

func (e *amountError) Error() string { return e.why }

// readAmount finds a call's amount by its tool's rule. A nil rule means the
// action has no amount. The arguments (raw JSON, nil when absent) are read
// only where the rule points into them; there any two member names that
// differ only in capitals refuse the call, since a server may read the other
// one. (An exact repeat is refused for the whole line by wire.Inspect.)
func readAmount(rule *settings.Amount, args []byte) (*record.Amount, error) {
	if rule == nil {
		return nil, nil
	}
	if rule.Kind == settings.AmountFixed {
		return &record.Amount{Unit: rule.Unit, Value: rule.Value}, nil
	}
	if args == nil {
		args = []byte("{}")
	}
	if _, dup := wire.FoldedDuplicate(args); dup {
		return nil, &amountError{CodeDuplicateMember, "the arguments name one member twice once capitals are folded"}
	}
	v, found, err := wire.Pointer(args, rule.Pointer)
	if err != nil || !found {
		return nil, &amountError{CodeAmountUnreadable, "nothing is at the amount's pointer " + quote(rule.Pointer)}
	}
	switch rule.Kind {
	case settings.AmountPointer:
		n, err := wire.WholeNumber(v)
		if err != nil {
			return nil, &amountError{CodeAmountUnreadable, "the value at " + quote(rule.Pointer) + " is not a whole number from 0 to 9007199254740991"}
		}
		return &record.Amount{Unit: rule.Unit, Value: n}, nil
	case settings.AmountCount:
		n, err := wire.ListLength(v)
		if err != nil {
			return nil, &amountError{CodeAmountUnreadable, "the value at " + quote(rule.Pointer) + " is not a list"}
		}
		return &record.Amount{Unit: rule.Unit, Value: int64(n)}, nil
	}
	return nil, &amountError{CodeAmountUnreadable, "the rule names no way to read the amount"}
}

// quote writes a text from the settings (never from the call) for a message.
func quote(s string) string { return "\"" + s + "\"" }
