package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/sidecar/report"
)

// runCompare is `mcp-executor compare --config F [--book B] [--json]`: it holds the executor's copy
// against the book, without locking or writing either (the executor may be running), and prints one
// summary line first and the details after, or one JSON object. Exit 0 only when they agree, the copy
// checks and the book has no problem; 1 otherwise (a missing copy key or book included); 2 usage.
func runCompare(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "compare", "--config FILE [--book BOOK] [--json]")
	config := fs.String("config", "", "the executor's settings file (required)")
	bookPath := fs.String("book", "", "another copy of the book to compare with (it must exist); default the settings' agent.book")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the report for people")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor compare: --config FILE is required, and nothing else")
		fs.Usage()
		return ExitUsage
	}
	res, err := report.CompareCopy(ctx, report.CompareOptions{ConfigPath: *config, BookPath: *bookPath, Logger: newLogger(env.Stderr), ListMatches: *asJSON})
	if err != nil {
		if *asJSON {
			if werr := writeJSON(env.Stdout, struct {
				OK    bool   `json:"ok"`
				Error string `json:"error"`
			}{false, err.Error()}); werr != nil {
				fmt.Fprintf(env.Stderr, "mcp-executor compare: %v\n", werr)
			}
		} else {
			fmt.Fprintf(env.Stdout, "compare: FAIL %v\n", err)
		}
		fmt.Fprintf(env.Stderr, "mcp-executor compare: %v\n", err)
		return ExitFinding
	}
	code := ExitOK
	if !res.OK() {
		code = ExitFinding
	}
	if *asJSON {
		out := struct {
			OK bool `json:"ok"`
			copylog.Report
			Copy         string             `json:"copy"`
			Book         string             `json:"book"`
			Rules        []report.RulesUse  `json:"rules"`
			BookFindings []book.LineFinding `json:"bookFindings"`
			Approvals    []string           `json:"approvalProblems"`
		}{res.OK(), res.Report, res.Copy, res.Book, res.Rules, res.BookCheck.Problems, nonNilStrings(res.Approvals)}
		if err := writeJSON(env.Stdout, out); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor compare: %v\n", err)
			return ExitFinding
		}
		return code
	}
	if err := writeCompare(env.Stdout, res); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor compare: %v\n", err)
		return ExitFinding
	}
	return code
}

// writeCompare writes copylog's report (its summary line first), then the book's problems with their
// lines and the rules fingerprints the records name.
func writeCompare(w io.Writer, res *report.CompareResult) error {
	if err := res.Report.WriteText(w); err != nil {
		return err
	}
	var b strings.Builder
	for _, p := range res.Approvals {
		fmt.Fprintf(&b, "compare: FAIL approval: %s\n", p)
	}
	fmt.Fprintf(&b, "copy %s; book %s\n", res.Copy, res.Book)
	for _, p := range res.BookCheck.Problems {
		where := "as a whole"
		if p.Line > 0 {
			where = fmt.Sprintf("line %d", p.Line)
		}
		fmt.Fprintf(&b, "book problem at %s: %s: %s\n", where, p.Code, p.Message)
	}
	for _, r := range res.Rules {
		stated := "no slip in the book states it"
		if r.Stated {
			stated = "a slip in the book states it"
		}
		fmt.Fprintf(&b, "rules %s: named by %s and %s; %s\n", r.SHA256, plural(r.Receipts, "receipt"), plural(r.Denials, "denial"), stated)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
