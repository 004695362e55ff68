package boot

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/durable"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// CheckpointPath is where the executor keeps its book checkpoint: beside
// the copy, on the executor's own volume (the agent's side never writes
// there), so that a book changed on its volume does not come with a
// checkpoint that fits it.
func CheckpointPath(set *settings.Settings) string { return set.Executor.Copy + ".book-checkpoint" }

// OpenBook opens the settings' book, using the checkpoint the executor
// left at its last stop where one fits: the signatures of the lines it
// covers are not checked again (every other check is made on every line).
// A checkpoint that cannot be read, whose tag does not check, or that does
// not fit the book is ignored with a warning, and the whole book is
// verified. Once the book is open and sound a new checkpoint is written.
func OpenBook(set *settings.Settings, copyKey []byte, log *slog.Logger) (*book.Book, error) {
	opts := book.Options{IssuerKeys: set.Agent.IssuerKeys}
	path := CheckpointPath(set)
	switch data, err := durable.ReadFile(path, maxCheckpoint); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		log.Warn("the book checkpoint cannot be read; the whole book is verified", slog.String("checkpoint", path), slog.String("error", err.Error()))
	default:
		cp, err := book.OpenCheckpoint(data, copyKey)
		if err != nil {
			log.Warn("the book checkpoint is ignored; the whole book is verified", slog.String("checkpoint", path), slog.String("error", err.Error()))
			break
		}
		opts.Checkpoint = &cp
	}
	bk, err := book.OpenBook(set.Agent.Book, opts)
	if err != nil {
		return nil, err
	}
	switch use := bk.CheckpointUse(); {
	case use == "used":
		log.Info("book opened from its checkpoint: the signatures after it were verified", slog.String("checkpoint", path),
			slog.Int("checkpointEntries", opts.Checkpoint.Entries), slog.Int("bookEntries", bk.Ledger().Size()))
	case use != "":
		log.Warn("the book checkpoint does not fit the book and is ignored; the whole book was verified",
			slog.String("checkpoint", path), slog.String("why", use))
	}
	if err := SaveCheckpoint(set, bk, copyKey); err != nil {
		log.Warn("the book checkpoint could not be written; the next start verifies the whole book", slog.String("error", err.Error()))
	}
	return bk, nil
}

// SaveCheckpoint writes the book's checkpoint (atomically: a new file
// renamed over the old one). It writes nothing while the book is not sound
// or lines are being written, and removes an older checkpoint then, so
// that none outlives the state it names.
func SaveCheckpoint(set *settings.Settings, bk *book.Book, copyKey []byte) error {
	path := CheckpointPath(set)
	cp, ok := bk.Checkpoint()
	if !ok {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing book checkpoint %s: %w", path, err)
		}
		return nil
	}
	data, err := cp.Seal(copyKey)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(path, data); err != nil {
		return fmt.Errorf("book checkpoint: %w", err)
	}
	return nil
}

// maxCheckpoint bounds the book checkpoint read at start: one is about 240
// bytes, and a start reads no file of unbounded length.
const maxCheckpoint = 4096

// CloseBook writes the book's checkpoint for the next start, then closes
// the book. A checkpoint that cannot be written is logged: the next start
// verifies the whole book.
func CloseBook(set *settings.Settings, bk *book.Book, copyKey []byte, log *slog.Logger) error {
	if err := SaveCheckpoint(set, bk, copyKey); err != nil {
		log.Warn("the book checkpoint could not be written; the next start verifies the whole book", slog.String("error", err.Error()))
	}
	return bk.Close()
}

// LogCopyCheckpoint says what the copy's open made of its checkpoint.
func LogCopyCheckpoint(cp *copylog.Log, log *slog.Logger) {
	switch use := cp.CheckpointUse(); {
	case use == "used":
		log.Info("copy opened from its checkpoint: the lines after it were read whole", slog.String("checkpoint", copylog.CheckpointPath(cp.Path())))
	case use != "":
		log.Warn("the copy checkpoint is ignored; the whole copy was read", slog.String("checkpoint", copylog.CheckpointPath(cp.Path())), slog.String("why", use))
	}
}

// CloseCopy saves the copy's checkpoint for the next start, then closes
// the copy. A checkpoint that cannot be saved is logged: the next start
// reads more of the copy, nothing else.
func CloseCopy(cp *copylog.Log, log *slog.Logger) error {
	SaveCopyCheckpoint(cp, log)
	return cp.Close()
}

// SaveCopyCheckpoint saves the copy's checkpoint where it can be made; one
// that cannot be saved is logged, and costs the next start more reading.
func SaveCopyCheckpoint(cp *copylog.Log, log *slog.Logger) {
	if _, err := cp.SaveCheckpoint(); err != nil {
		log.Warn("the copy checkpoint could not be saved; the next start reads more of the copy", slog.String("error", err.Error()))
	}
}
