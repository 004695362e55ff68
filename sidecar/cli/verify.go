package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// runVerify is `mcp-executor verify BOOK --trust THUMBPRINT [--trust …] [--json]`: it checks a book and
// exits 0 when it is intact and within its slips, 1 otherwise (an unreadable file included).
func runVerify(_ context.Context, env Env, args []string) int {
	fs := newFlags(env, "verify", "BOOK --trust THUMBPRINT [--trust THUMBPRINT …] [--json]")
	var trust multiFlag
	fs.Var(&trust, "trust", "the RFC 7638 thumbprint of a passkey trusted to sign slips (repeat for more); required")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the report for people")
	positional, err := interleaved(fs, args)
	if err != nil {
		return flagErrCode(err)
	}
	switch {
	case len(positional) != 1:
		fmt.Fprintln(env.Stderr, "mcp-executor verify: name exactly one book")
		fs.Usage()
		return ExitUsage
	case len(trust) == 0:
		fmt.Fprintln(env.Stderr, "mcp-executor verify: --trust is required: the thumbprint of the passkey trusted to sign the book's slips")
		fs.Usage()
		return ExitUsage
	}
	for _, t := range trust {
		if !canon.IsFingerprint(t) {
			fmt.Fprintf(env.Stderr, "mcp-executor verify: --trust %q is not a thumbprint (43 characters of base64url)\n", t)
			return ExitUsage
		}
	}
	path := positional[0]
	rep, err := book.VerifyFile(path, trust)
	if err != nil {
		if *asJSON {
			if werr := writeJSON(env.Stdout, verifyFailure{Path: path, Intact: false, WithinSlips: false, Error: err.Error(),
				Problems: []book.LineFinding{}, Breaches: []book.LineFinding{}}); werr != nil {
				fmt.Fprintf(env.Stderr, "mcp-executor verify: %v\n", werr)
			}
		}
		fmt.Fprintf(env.Stderr, "mcp-executor verify: %v\n", err)
		return ExitFinding
	}
	if *asJSON {
		if err := writeJSON(env.Stdout, rep); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor verify: %v\n", err)
			return ExitFinding
		}
		return rep.ExitCode()
	}
	if err := rep.Render(env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor verify: %v\n", err)
		return ExitFinding
	}
	return rep.ExitCode()
}

// verifyFailure is the JSON answer for a book that could not be read.
type verifyFailure struct {
	Path        string             `json:"path"`
	Intact      bool               `json:"intact"`
	WithinSlips bool               `json:"withinSlips"`
	Problems    []book.LineFinding `json:"problems"`
	Breaches    []book.LineFinding `json:"breaches"`
	Error       string             `json:"error"`
}

// flagErrCode is the exit code for an error of interleaved, which has already printed it and the usage:
// 0 for -h, 2 for anything else.
func flagErrCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return ExitUsage
}

// writeJSON writes v as one indented JSON object and a line feed, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
