package book

import "github.com/seed-6e06167c/mcp-executor/receipts/canon"

// fileEntry reads one line's entry, in the order slip, stub, refusal,
// cancellation, acknowledgement.
func fileEntry(line []byte) (FileEntry, bool) {
	v, err := canon.Parse(line)
	if err != nil {
		return FileEntry{}, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return FileEntry{}, false
	}
	return entryOf(obj)
}
