package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/seed-6e06167c/mcp-executor/sidecar/report"
)

func init() {
	extraCommands["tools"] = command{
		summary: "start each tool server and list its tools beside the executor's decision",
		run:     runTools,
	}
}

// runTools is `mcp-executor tools --config FILE [--json]`: exit 0, or 1
// when a server cannot be started or listed.
func runTools(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "tools", "--config FILE [--json]")
	config := fs.String("config", "", "the executor's settings file (required)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table for people")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor tools: --config FILE is required, and nothing else")
		fs.Usage()
		return ExitUsage
	}
	res, err := report.Tools(ctx, *config, newLogger(env.Stderr))
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor tools: %v\n", err)
		return ExitFinding
	}
	write := res.WriteText
	if *asJSON {
		write = func(w io.Writer) error { return writeShownJSON(w, res) }
	}
	if err := write(env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor tools: %v\n", err)
		return ExitFinding
	}
	if len(res.Failures) > 0 {
		return ExitFinding
	}
	return ExitOK
}
