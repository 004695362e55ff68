//go:build integration

// Package itest sets up the real servers the integration tests of keys and
// sidecar/keysintegration use: a Vault dev server (scripts/testenv/vault.sh)
// and a kube-apiserver with etcd (scripts/testenv/kube-apiserver.sh). A
// test that needs a server which is not reachable fails; it does not skip.
package itest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// startServers is what a test whose servers are missing says to do.
// It is the one command, run in the repository's folder, that builds (once) and starts every real server
// the integration tests use and sets the variables they read; ./scripts/test.sh does it too.
const startServers = `start the test servers first: eval "$(./scripts/testenv/servers.sh start)" in the repository's folder (it builds them once)`

// Name returns prefix and 8 random hex characters: every run uses fresh
// names, so runs against a long-lived server do not meet.
func Name(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func need(t testing.TB, names ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			t.Fatalf("%s is not set: %s", n, startServers)
		}
		env[n] = v
	}
	return env
}

// Ctx is a context for one test's set-up and calls.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// WriteSecretFile writes text and a newline to dir/name, mode 0600.
func WriteSecretFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
