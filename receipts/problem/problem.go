// Package problem carries the Provared problem codes ("bad-field",
// "signature-invalid", ...) as Go errors, so that every layer of receipts can
// return an error whose code a caller, a test vector or a report can read.
package problem

import (
	"errors"
	"fmt"
)

// Error is a fault found in a record or a book, with the reference's code.
// Messages are ours; codes are the format's and are compared by tests.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New returns an *Error with code and a formatted message.
func New(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// CheckFailed is the code of an unexpected internal failure; it is never a pass.
const CheckFailed = "check-failed"

// Code returns the problem code carried by err, "" for nil, and
// CheckFailed for an error that carries no code.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return CheckFailed
}
