package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/report"
)

// runKeys is `mcp-executor keys --config F [--json] [--manifests FILE]`: it makes the agent's and the
// executor's key sets and the copy key where they are missing, and prints what goes into the permission
// (public keys only). Where a key lives in a Kubernetes Secret, which the executor never writes, the
// Secret manifest holding the new key is written to the file --manifests names (mode 0600, never
// replacing a file) for the user to apply; without --manifests the command says so and writes none.
// Exit 0 when everything is in place, 1 when anything is left to do, 2 for a usage error.
func runKeys(ctx context.Context, env Env, args []string) int {
	flags := newFlags(env, "keys", "--config FILE [--json] [--manifests FILE]")
	config := flags.String("config", "", "the executor's settings file (required)")
	asJSON := flags.Bool("json", false, "print what goes into the permission as one JSON object")
	manifests := flags.String("manifests", "", "where to write the Secret manifests holding new keys kept in Kubernetes Secrets (mode 0600; must not exist)")
	if code, done := parseFlags(flags, args); done {
		return code
	}
	if *config == "" || flags.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor keys: --config FILE is required, and nothing else")
		flags.Usage()
		return ExitUsage
	}
	rep, err := report.MakeKeys(ctx, report.KeysOptions{ConfigPath: *config, Logger: newLogger(env.Stderr)})
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor keys: %v\n", err)
		return ExitFinding
	}
	// Notices go with the report for people, and to stderr beside a JSON object.
	notices := env.Stdout
	if *asJSON {
		notices = env.Stderr
	}
	code := ExitOK
	for _, k := range []report.KeyMade{rep.Agent, rep.Executor, rep.CopyKey} {
		if k.Err == nil {
			state := "kept (it was there)"
			if k.Made {
				state = "made now"
			}
			fmt.Fprintf(notices, "%s: %s, %s\n", k.What, state, strings.Join(k.Sources, " + "))
		}
	}
	for _, p := range rep.Problems() {
		fmt.Fprintf(env.Stderr, "mcp-executor keys: %v\n", p)
		code = ExitFinding
	}
	if ms := rep.Manifests(); len(ms) > 0 {
		code = ExitFinding
		if err := writeManifests(notices, *manifests, rep); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor keys: %v\n", err)
		}
	}
	if !rep.Complete() {
		fmt.Fprintln(env.Stderr, "mcp-executor keys: the permission's parts are not all known yet; put right what is said above and run keys again")
		return ExitFinding
	}
	if *asJSON {
		if err := writeJSON(env.Stdout, rep.Permission()); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor keys: %v\n", err)
			return ExitFinding
		}
		return code
	}
	if err := writePermission(env.Stdout, rep); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor keys: %v\n", err)
		return ExitFinding
	}
	return code
}

// writeManifests writes the Secret manifests to path (new, mode 0600) and says how to apply them; with
// no path it says how to get them. The manifests hold secret values: they never go to a stream.
func writeManifests(w io.Writer, path string, rep *report.KeysReport) error {
	ms := rep.Manifests()
	// Each missing key is named in words of its own: the error's text tells how to apply a manifest of
	// that key alone, but the file written below holds one manifest per Secret, applied once.
	for _, m := range ms {
		why := "the Secret has no such key"
		if !m.SecretExists {
			why = "the Secret does not exist"
		}
		fmt.Fprintf(w, "%s/%s key %s: missing (%s); the executor does not write Secrets\n", m.Namespace, m.Name, m.Key, why)
	}
	if path == "" {
		return errors.New("a key kept in a Kubernetes Secret is missing and the executor does not write Secrets: run keys again with --manifests FILE to have the manifest holding the new key written to FILE (mode 0600), apply it, delete FILE and run keys again")
	}
	doc, err := report.SecretManifests(ms)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("writing the Secret manifests: %s is there already; name a new file", path)
		}
		return fmt.Errorf("writing the Secret manifests: %w", err)
	}
	if _, err := f.Write(doc); err != nil {
		// A part of the manifests must not stay behind: say so when it does.
		return errors.Join(fmt.Errorf("writing the Secret manifests to %s: %w", path, err), f.Close(), os.Remove(path))
	}
	if err := f.Close(); err != nil {
		return errors.Join(fmt.Errorf("writing the Secret manifests to %s: %w", path, err), os.Remove(path))
	}
	fmt.Fprintf(w, "wrote the Secret manifests holding the new keys to %s (mode 0600); apply them with `kubectl apply --server-side -f %s`, delete the file, and run keys again\n", path, path)
	return nil
}

// writePermission prints each part of the permission with one line saying where it goes.
func writePermission(w io.Writer, rep *report.KeysReport) error {
	perm := rep.Permission()
	agent, ok := perm["agent"].(map[string]any)
	if !ok {
		return errors.New("writing the permission: it holds no agent part (a bug in the keys report)")
	}
	var b strings.Builder
	part := func(explain string, v any) error {
		text, err := canon.Marshal(v)
		if err != nil {
			return fmt.Errorf("writing %s: %w", explain, err)
		}
		fmt.Fprintf(&b, "%s\n%s\n", explain, text)
		return nil
	}
	if err := part("agent.keys: the agent's public keys (Ed25519, ML-DSA-87); they go into the permission as agent.keys:", agent["keys"]); err != nil {
		return err
	}
	if sw, ok := agent["software"]; ok {
		if err := part("agent.software: the fingerprint of the rules on content in force; it goes into agent.software, so that the executor starts only with the rules the person approved:", sw); err != nil {
			return err
		}
	}
	if err := part("with: the executor's id, name and public keys; this entry goes into the permission's with, so that the executor may countersign:", perm["with"]); err != nil {
		return err
	}
	if err := part("requires: this goes into the permission's requires, so that a receipt without the executor's countersignature is a finding:", perm["requires"]); err != nil {
		return err
	}
	b.WriteString("Then have the person sign the permission with their passkey, save it where agent.slip says, and put the passkey's thumbprint into agent.issuerKeys.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
