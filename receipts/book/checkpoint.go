package book

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/internal/sealed"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// Checkpoint is the state of a book its executor read and verified: how
// many entries and bytes it then held, its top fingerprint, and the trust
// it was read under. Opened with a checkpoint that fits, OpenBook checks the
// signatures of the lines after it only; every other check it still makes
// on every line (the ledger's totals, chains and ids are worked out from
// the whole book). A checkpoint that does not fit the book is ignored, never
// trusted, and the whole book is verified.
type Checkpoint struct {
	Entries int
	Bytes   int64
	Root    string // base64url of the top fingerprint over the first Entries lines
	Trust   string // fingerprint of the options the book was verified under
}

const checkpointType = "mcp-executor.book-checkpoint.v1"

// trustOf fingerprints the options that change what a signature check
// finds: a checkpoint made under other trusted passkeys does not fit.
func trustOf(opts Options) string {
	keys := slices.Clone(opts.IssuerKeys)
	slices.Sort(keys)
	without := slices.Clone(opts.WithoutMethods)
	slices.Sort(without)
	return canon.Fingerprint([]byte(strings.Join(keys, ",") + "|" + strings.Join(without, ",")))
}

// Seal writes the checkpoint as one canonical line tagged with HMAC-SHA256
// under a key derived from key (at least 16 bytes; internal/sealed).
func (c Checkpoint) Seal(key []byte) ([]byte, error) {
	body := map[string]any{"entries": int64(c.Entries), "bytes": c.Bytes, "root": c.Root, "trust": c.Trust}
	out, err := sealed.Seal(checkpointType, key, body)
	if err != nil {
		return nil, fmt.Errorf("sealing a book checkpoint: %w", err)
	}
	return out, nil
}

// OpenCheckpoint reads a checkpoint Seal wrote under key, and fails when it
// does not parse or its tag does not check.
func OpenCheckpoint(data, key []byte) (Checkpoint, error) {
	obj, err := sealed.Open(checkpointType, key, data)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("book checkpoint: %w", err)
	}
	var c Checkpoint
	entries, ok1 := obj["entries"].(int64)
	bytes, ok2 := obj["bytes"].(int64)
	c.Root, _ = obj["root"].(string)
	c.Trust, _ = obj["trust"].(string)
	if !ok1 || !ok2 || entries < 0 || entries > MaxEntries || bytes < 0 || c.Root == "" || c.Trust == "" {
		return Checkpoint{}, errors.New("book checkpoint: a member is missing or out of range")
	}
	c.Entries, c.Bytes = int(entries), bytes
	return c, nil
}

// Checkpoint is the book's state now, for the next start: ok is false
// while lines are being written or when the ledger is not sound (a
// checkpoint is only ever made of a sound book, every line of it durable).
func (b *Book) Checkpoint() (c Checkpoint, ok bool) {
	l := b.ledger
	if l.Sound() != nil {
		return Checkpoint{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.w.Busy() || b.w.Err() != nil || b.needLF {
		return Checkpoint{}, false
	}
	root := l.r.tree.root()
	return Checkpoint{Entries: l.r.size, Bytes: b.size, Root: canon.B64(root[:]), Trust: b.trust}, true
}

// CheckpointUse says what OpenBook made of the checkpoint it was given:
// "" when none was given, "used" when the signatures of the lines it
// covers were not checked again, else why it was ignored.
func (b *Book) CheckpointUse() string { return b.cpUse }
