// Package durable writes the executor's small state files (checkpoints,
// queue files) so that they survive a crash of the machine, whole or not
// at all, with the folder's entry synced too; and reads them back with a
// bound on their length.
package durable

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadFile reads the file at path, failing when it holds more than limit
// bytes: a start reads no state file of unbounded length. Errors from
// opening the file are returned as they are (errors.Is(err,
// fs.ErrNotExist) holds for a missing file).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is longer than %d bytes", path, limit)
	}
	return data, nil
}

// WriteFile replaces the file at path with data: a new file (mode 0600) in
// the same folder, written and synced, renamed over path, and then the
// folder synced. A reader sees the old content or the new, never part of
// either; once WriteFile returns, a crash cannot bring the old one back.
// On failure path is as it was and no temporary file is left.
func WriteFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			// Abandoned: the write's error is the one to report; these
			// only tidy up after it.
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("renaming into %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs the folder dir, so that a name made, renamed or removed
// in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing folder %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		_ = d.Close() // read-only handle; the sync error is the one to report
		return fmt.Errorf("syncing folder %s: %w", dir, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("closing folder %s: %w", dir, err)
	}
	return nil
}
