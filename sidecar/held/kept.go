package held

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// Kept keeps, in the queue folder Dir, the person's approval of an
// approved call from just before the call is sent until its stub is in
// the book: a start after a stop in between writes the stub late with it,
// since the copy holds only the call's details.
type Kept struct{ Dir string }

// keptSuffix ends the name of a kept approval's file: <call>.approval.
const keptSuffix = ".approval"

// Path is the file that keeps call's approval.
func (k Kept) Path(call string) string { return filepath.Join(k.Dir, call+keptSuffix) }

// Keep writes the approval of a call about to be sent, durably: a new
// file renamed into place, the file and then the folder synced.
func (k Kept) Keep(call string, rec *record.Record) error {
	data, err := canon.Marshal(map[string]any{"approval": rec.Value()})
	if err != nil {
		return fmt.Errorf("keeping the approval of call %s: %w", call, err)
	}
	if err := approval.WriteFileAtomic(k.Dir, call+keptSuffix, data); err != nil {
		return fmt.Errorf("keeping the approval of call %s: %w", call, err)
	}
	return nil
}

// Forget removes a kept approval once the call's stub is in the book or
// the call was not sent; one that is not there is no error.
func (k Kept) Forget(call string) error {
	if err := os.Remove(k.Path(call)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Read reads the approval kept for a call; nil when there is none.
func (k Kept) Read(call string) (*record.Record, error) {
	data, err := approval.ReadQueueFile(k.Path(call))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kept approval of call %s: %w", call, err)
	}
	v, err := canon.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the kept approval of call %s (%s): %w", call, k.Path(call), err)
	}
	m, _ := v.(map[string]any)
	a, err := slip.ReadApproval(m["approval"])
	if err != nil {
		return nil, fmt.Errorf("the kept approval of call %s (%s): %w", call, k.Path(call), err)
	}
	return a.Record, nil
}
