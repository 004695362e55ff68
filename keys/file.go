package keys

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/seed-6e06167c/mcp-executor/internal/durable"
)

// MaxValueSize caps what a source may hold; key sets, copy keys and
// credentials are all far smaller.
const MaxValueSize = 1 << 20

// fileSource is a secret in a file. Its mode must give others no access
// (refused otherwise); access for the group is allowed with a warning, since
// Kubernetes volumes with an fsGroup give it.
type fileSource struct {
	spec string
	path string
	log  *slog.Logger
}

func newFileSource(spec, p, baseDir string, opts Options) *fileSource {
	return &fileSource{spec: spec, path: resolvePath(p, baseDir), log: opts.logger()}
}

func (s *fileSource) Name() string     { return s.spec }
func (s *fileSource) Describe() string { return "file " + s.path }

// Path is the file's absolute or cleaned path.
func (s *fileSource) Path() string { return s.path }

// Read returns the file's content with one trailing newline ("\n" or
// "\r\n") dropped.
func (s *fileSource) Read(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Describe(), err)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Describe(), err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Describe(), err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file", s.Describe())
	}
	if err := s.checkMode(effectiveMode(s.path, info.Mode().Perm())); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxValueSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Describe(), err)
	}
	if len(b) > MaxValueSize {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", s.Describe(), MaxValueSize)
	}
	return dropNewline(b), nil
}

func (s *fileSource) checkMode(perm fs.FileMode) error {
	if perm&0o007 != 0 {
		return fmt.Errorf("reading %s: the file gives others access (mode %04o); a secret file must be 0600 or 0400 (chmod 600 %s)", s.Describe(), perm, s.path)
	}
	if perm&0o070 != 0 {
		s.log.Warn("secret file gives its group access", slog.String("source", s.spec), slog.String("path", s.path), slog.String("mode", fmt.Sprintf("%04o", perm)))
	}
	return nil
}

// Create writes value and a newline to a new file of mode 0600 (making the
// folder, mode 0700, when missing), never replacing a file that is there:
// the content is written and synced under a temporary name, then linked into
// place, so a reader never sees half a file; the folder (and the parent of
// every folder made) is then synced, so the new name survives a crash.
func (s *fileSource) Create(ctx context.Context, value []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	dir := filepath.Dir(s.path)
	if err := makeFolders(dir); err != nil {
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".new-*")
	if err != nil {
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	tmpName := tmp.Name()
	// Once linked into place the temporary name is only a second name of the file; on failure it is the
	// half-written file. Either way it goes, and a failure to remove it leaves a dot-file, never a wrong key.
	defer func() { _ = os.Remove(tmpName) }()
	content := append(bytes.Clone(value), '\n')
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close() // the error above is the one to report
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	if _, err := tmp.Write(content); err != nil {
		_ = tmp.Close() // the error above is the one to report
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close() // the error above is the one to report
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	if err := os.Link(tmpName, s.path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s: %w", s.Describe(), fs.ErrExist)
		}
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("creating %s: %w", s.Describe(), err)
	}
	return nil
}

// makeFolders makes dir and any missing folder above it, mode 0700, and
// syncs the parent of each folder it made, so that the new names survive a
// crash along with the file written below them.
func makeFolders(dir string) error {
	var missing []string // deepest first
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a folder, so that a name made in it survives a crash. Tests
// replace it to see which folders are synced: a sync cannot be observed.
var syncDir = durable.SyncDir

func dropNewline(b []byte) []byte {
	if bytes.HasSuffix(b, []byte("\r\n")) {
		return b[:len(b)-2]
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}
