// Package cli implements the mcp-executor subcommands: flag parsing, the reports they print and their
// exit codes. The command in cmd/mcp-executor only sets up signals and tracing and calls [Main].
//
// Exit codes: 0 success; 1 a finding (a book not intact, a copy that does not agree, a failed check) or
// a failure while running; 2 a usage error (unknown subcommand, bad flag, missing argument). `stdio`
// exits with the tool server's own code when the server ends, 130 on SIGINT and 143 on SIGTERM.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	ExitOK      = 0
	ExitFinding = 1
	ExitUsage   = 2
)

// Env is what a subcommand reads and writes: its arguments and the three standard streams.
type Env struct {
	Args    []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Version string
	// Metrics serves the process's metrics as Prometheus text: serve mounts it as /metrics on its
	// --health address. nil: no /metrics.
	Metrics http.Handler
}

type command struct {
	summary string
	hidden  bool
	run     func(ctx context.Context, env Env, args []string) int
}

// commands is the table of subcommands. Files of this package that add a subcommand (serve, bridge,
// install-binary) put it in extraCommands from their init; the table is assembled on first use, after
// every init has run.
func commands() map[string]command {
	table := map[string]command{
		"stdio":       {summary: "run the executor for one MCP client on standard input and output", run: runStdio},
		"keys":        {summary: "make missing keys and print what goes into the permission", run: runKeys},
		"check":       {summary: "read settings, keys, slip, book and credentials; write nothing", run: runCheck},
		"verify":      {summary: "check a book: exit 0 when intact and within its slips", run: runVerify},
		"compare":     {summary: "compare the executor's copy with the book", run: runCompare},
		"demo":        {summary: "a self-contained demonstration with development keys", run: runDemo},
		"version":     {summary: "print the version (also --version)", run: runVersion},
		"demo-server": {summary: "the demo's built-in tool server (MCP over stdio)", hidden: true, run: runDemoServer},
	}
	for name, c := range extraCommands {
		table[name] = c
	}
	return table
}

// extraCommands lets files of this package add subcommands without editing the table.
var extraCommands = map[string]command{}

// Main runs the subcommand named by env.Args[0] and returns the process exit code.
func Main(ctx context.Context, env Env) int {
	if len(env.Args) == 0 {
		usage(env.Stderr)
		return ExitUsage
	}
	name := env.Args[0]
	switch name {
	case "help", "-h", "--help", "-help":
		usage(env.Stdout)
		return ExitOK
	case "--version", "-version":
		// -v is not one: in Go's tools it asks for more output (go test -v).
		return runVersion(ctx, env, env.Args[1:])
	}
	c, ok := commands()[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "mcp-executor: unknown subcommand %q\n", name)
		usage(env.Stderr)
		return ExitUsage
	}
	return c.run(ctx, env, env.Args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: mcp-executor <subcommand> [flags]")
	fmt.Fprintln(w)
	table := commands()
	names := make([]string, 0, len(table))
	for n, c := range table {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, table[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `mcp-executor <subcommand> -h` for its flags.")
}

// newFlags returns a flag set that reports errors on env.Stderr and never exits the process.
func newFlags(env Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: mcp-executor %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and returns (exit code, done): done is true when the caller must return
// the code at once (a usage error, or -h).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, true
		}
		return ExitUsage, true
	}
	return ExitOK, false
}

// interleaved lets positional arguments stand before flags (`verify BOOK --trust T`).
func interleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// newLogger returns the JSON logger on stderr, at the level MCP_EXECUTOR_LOG_LEVEL names.
func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("MCP_EXECUTOR_LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

// runVersion is `mcp-executor version` and `mcp-executor --version`; it takes no argument.
func runVersion(_ context.Context, env Env, args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(env.Stderr, "usage: mcp-executor version")
		return ExitUsage
	}
	fmt.Fprintln(env.Stdout, "mcp-executor", env.Version)
	return ExitOK
}
