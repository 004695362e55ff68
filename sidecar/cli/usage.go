package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/seed-6e06167c/mcp-executor/sidecar/report"
)

func init() {
	extraCommands["report"] = command{
		summary: "what happened to each tool's calls, from the copy and the book",
		run:     runReport,
	}
}

// runReport is `mcp-executor report --config FILE [--json]`: exit 0, or 1
// when the copy cannot be read or compare finds a problem.
func runReport(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "report", "--config FILE [--json]")
	config := fs.String("config", "", "the executor's settings file (required)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the report for people")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor report: --config FILE is required, and nothing else")
		fs.Usage()
		return ExitUsage
	}
	res, err := report.Usage(ctx, *config, newLogger(env.Stderr))
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor report: %v\n", err)
		return ExitFinding
	}
	write := res.WriteText
	if *asJSON {
		write = func(w io.Writer) error { return writeShownJSON(w, res) }
	}
	if err := write(env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor report: %v\n", err)
		return ExitFinding
	}
	if !res.CompareOK {
		return ExitFinding
	}
	return ExitOK
}
