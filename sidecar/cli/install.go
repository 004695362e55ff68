package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func init() {
	extraCommands["install-binary"] = command{
		summary: "copy this binary to PATH (the chart's init step, so any agent image can run bridge)",
		hidden:  true,
		run:     runInstallBinary,
	}
}

func runInstallBinary(_ context.Context, env Env, args []string) int {
	fs := newFlags(env, "install-binary", "DEST")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return ExitUsage
	}
	if err := installBinary(fs.Arg(0)); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor install-binary: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}

// installBinary copies the running executable to dest (mode 0755) through a temporary file and a rename,
// so that a reader never sees a half-written binary.
func installBinary(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("opening %s: %w", self, err)
	}
	defer func() { _ = src.Close() }() // read only: a failed close loses nothing
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".mcp-executor-*")
	if err != nil {
		return fmt.Errorf("creating a file beside %s: %w", dest, err)
	}
	// After the rename there is nothing to remove; before it, a failed step leaves a file to tidy away,
	// and the step's error is the one to report.
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := io.Copy(tmp, src); err != nil {
		return errors.Join(fmt.Errorf("copying to %s: %w", tmp.Name(), err), tmp.Close())
	}
	if err := tmp.Chmod(0o755); err != nil {
		return errors.Join(fmt.Errorf("setting the mode of %s: %w", tmp.Name(), err), tmp.Close())
	}
	if err := tmp.Sync(); err != nil {
		return errors.Join(fmt.Errorf("syncing %s: %w", tmp.Name(), err), tmp.Close())
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("installing %s: %w", dest, err)
	}
	return nil
}
