package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/sidecar/report"
)

// runCheck is `mcp-executor check --config F [--json]`: it reads the settings, every key, the copy, the
// slip, the book, the server's credentials and the rules on content, reports every problem, and writes
// nothing. Exit 0 when there is no problem (warnings allowed), 1 otherwise.
func runCheck(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "check", "--config FILE [--json]")
	config := fs.String("config", "", "the executor's settings file (required)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the report for people")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor check: --config FILE is required, and nothing else")
		fs.Usage()
		return ExitUsage
	}
	rep := report.CheckSetup(ctx, report.CheckOptions{ConfigPath: *config, Logger: newLogger(env.Stderr)})
	code := ExitOK
	if !rep.OK() {
		code = ExitFinding
	}
	if *asJSON {
		out := struct {
			OK bool `json:"ok"`
			*report.SetupReport
			Problems int `json:"problems"`
			Warnings int `json:"warnings"`
		}{rep.OK(), rep, rep.Count(report.LevelProblem), rep.Count(report.LevelWarning)}
		if err := writeJSON(env.Stdout, out); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor check: %v\n", err)
			return ExitFinding
		}
		return code
	}
	if err := writeSetupReport(env.Stdout, rep); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor check: %v\n", err)
		return ExitFinding
	}
	return code
}

// writeSetupReport writes one line per item, "level: what (where): message; to fix: …", then a
// verdict.
func writeSetupReport(w io.Writer, rep *report.SetupReport) error {
	var b strings.Builder
	for _, it := range rep.Items {
		fmt.Fprintf(&b, "%-8s %s", it.Level+":", it.What)
		if it.Where != "" {
			fmt.Fprintf(&b, " (%s)", it.Where)
		}
		fmt.Fprintf(&b, ": %s", it.Message)
		if it.Fix != "" {
			fmt.Fprintf(&b, "; to fix: %s", it.Fix)
		}
		b.WriteByte('\n')
	}
	problems, warnings := rep.Count(report.LevelProblem), rep.Count(report.LevelWarning)
	if problems == 0 {
		fmt.Fprintf(&b, "check: all well (%s); nothing was written\n", plural(warnings, "warning"))
	} else {
		fmt.Fprintf(&b, "check: FAIL %s, %s; nothing was written\n", plural(problems, "problem"), plural(warnings, "warning"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
