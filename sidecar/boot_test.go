package sidecar_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// Start-up has a timeout: with the agent's keys in a Vault that takes connections and never answers,
// OpenBounded returns an error naming the boot timeout instead of waiting for ever. (The silent Vault
// is a real TCP listener that reads nothing: no real Vault can be made to hang on cue.)
func TestBootTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	o, _ := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	editSettings(t, env.SettingsPath, func(set map[string]any) {
		set["vault"] = map[string]any{"address": "http://" + l.Addr().String(), "auth": map[string]any{"token": map[string]any{}}}
		set["agent"].(map[string]any)["keys"] = "vault:secret/agent#keyset"
	})
	t.Setenv("VAULT_TOKEN", "test-token")
	_, err = sidecar.OpenBounded(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath}, 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "boot timeout") {
		t.Fatalf("start-up against a Vault that never answers: %v, want an error naming the boot timeout", err)
	}
}
