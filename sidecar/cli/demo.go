package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-6e06167c/mcp-executor/sidecar/demo"
)

func runDemo(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "demo", "[--dir DIR]")
	dir := fs.String("dir", "", "the folder to work in (default: a new temporary folder, kept afterwards)")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return ExitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "mcp-executor demo: "+format+"\n", a...)
		return ExitFinding
	}
	exe, err := os.Executable()
	if err != nil {
		return fail("finding this executable: %v", err)
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "mcp-executor-demo-*"); err != nil {
			return fail("making a temporary folder: %v", err)
		}
	}
	out := env.Stdout
	fmt.Fprintln(out, "mcp-executor demo")
	fmt.Fprintln(out, demo.Disclaimer)
	fmt.Fprintln(out)
	setup, err := demo.Setup(*dir, exe)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(out, "The slip allows provared.data.read, supplies.order (at most £50 in all) and provared.message.send, and asks for the executor's countersignature; the settings hold every email_supplier call for a person's approval.\n\n")
	// The executor's own logs go to a file so the demo's output stays readable.
	logPath := filepath.Join(*dir, "executor.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fail("opening %s: %v", logPath, err)
	}
	sessionErr := demo.RunSession(ctx, exe, setup.SettingsPath, logFile, out)
	if err := logFile.Close(); err != nil && sessionErr == nil {
		sessionErr = fmt.Errorf("closing the executor log %s: %w", logPath, err)
	}

	fmt.Fprintln(out)
	fmt.Fprintln(out, "== verify (the book)")
	verifyCode := runVerify(ctx, env, []string{setup.BookPath, "--trust", setup.Thumbprint})
	fmt.Fprintln(out)
	fmt.Fprintln(out, "== compare (the executor's copy against the book)")
	compareCode := runCompare(ctx, env, []string{"--config", setup.SettingsPath})
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Files are in %s:\n", *dir)
	for _, f := range []struct{ what, path string }{
		{"settings", setup.SettingsPath}, {"slip", setup.SlipPath}, {"book", setup.BookPath},
		{"copy", setup.CopyPath}, {"executor log", logPath},
	} {
		fmt.Fprintf(out, "  %-13s %s\n", f.what, f.path)
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, demo.Disclaimer)

	switch {
	case sessionErr != nil:
		return fail("%v", sessionErr)
	case verifyCode != ExitOK:
		return fail("verify did not find the book intact and within its slip (exit %d)", verifyCode)
	case compareCode != ExitOK:
		return fail("compare did not find the copy and the book in agreement (exit %d)", compareCode)
	}
	fmt.Fprintln(out, "demo: every expectation held")
	return ExitOK
}

func runDemoServer(ctx context.Context, env Env, args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(env.Stderr, "usage: mcp-executor demo-server (no arguments; speaks MCP on stdin/stdout)")
		return ExitUsage
	}
	if err := demo.ServeTools(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor demo-server: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}
