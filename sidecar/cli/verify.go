package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/stamp"
)

// runVerify is `mcp-executor verify BOOK --trust THUMBPRINT [--trust …] [--sealer FP …] [--stamp-service FP …]
// [--json]`: it checks a book and exits 0 when it is intact and within its slips, 1 otherwise (an
// unreadable file included). For each trusted time-stamp service it says how far the book's seals are
// shown to have existed by its stamps, and it shows the sound stamps of the services not named as not
// counted.
func runVerify(_ context.Context, env Env, args []string) int {
	fs := newFlags(env, "verify", "BOOK --trust THUMBPRINT [--trust THUMBPRINT …] [--sealer FP …] [--stamp-service FP|CHAIN.pem …] [--json]")
	var trust, sealers, services multiFlag
	fs.Var(&trust, "trust", "the RFC 7638 thumbprint of a passkey trusted to sign slips (repeat for more); required")
	fs.Var(&sealers, "sealer", "the fingerprint of a recorder's key set whose seals are expected (repeat for more); a seal by other keys is a problem")
	fs.Var(&services, "stamp-service", "the SHA-256 fingerprint (base64url) of the certificate of a trusted time-stamp service, or a PEM file whose first certificate is it (repeat for more)")
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
	for _, fp := range sealers {
		if !canon.IsFingerprint(fp) {
			fmt.Fprintf(env.Stderr, "mcp-executor verify: --sealer %q is not a key set's fingerprint (43 characters of base64url)\n", fp)
			return ExitUsage
		}
	}
	opts := book.Options{IssuerKeys: trust}
	if len(sealers) > 0 {
		opts.SealKeys = sealers
	}
	for _, s := range services {
		fp, err := stampService(s)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor verify: --stamp-service %q: %v\n", s, err)
			return ExitUsage
		}
		opts.StampServices = append(opts.StampServices, fp)
	}
	path := positional[0]
	rep, err := book.VerifyFileWith(path, opts)
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

// stampService reads one --stamp-service: a certificate's fingerprint as
// it is, or a PEM file whose first certificate is the service's.
func stampService(v string) (string, error) {
	if canon.IsFingerprint(v) {
		return v, nil
	}
	pemText, err := os.ReadFile(v)
	if err != nil {
		return "", fmt.Errorf("neither a certificate's fingerprint (43 characters of base64url) nor a readable PEM file: %w", err)
	}
	_, fp, err := stamp.ParseChain(pemText)
	if err != nil {
		return "", err
	}
	return fp, nil
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
