//go:build integration

// Package keysintegration_test runs the executor end to end with every key and the tool server's
// credential kept in a real Vault dev server (KV version 2 and Transit) or in real Kubernetes Secrets
// (a real kube-apiserver): the servers of scripts/testenv (vault.sh, kube-apiserver.sh).
// A test whose server is not reachable fails; none skips.
//
//	go test -tags integration ./sidecar/keysintegration/
//
// The executor is the real binary, built once in TestMain; its client is the official go-sdk client;
// its tool server is this test binary run again with serverEnv set (a go-sdk server).
package keysintegration_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// serverEnv, set in the tool server's environment by the settings, makes this test binary the tool
// server.
const serverEnv = "KEYSIT_TOOL_SERVER"

// executorBin is the mcp-executor binary built in TestMain.
var executorBin string

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		runToolServer()
		return
	}
	dir, err := os.MkdirTemp("", "keysintegration-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	executorBin = filepath.Join(dir, "mcp-executor")
	build := exec.Command("go", "build", "-o", executorBin, "../../cmd/mcp-executor")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "keysintegration: building ../../cmd/mcp-executor: %v\n%s\n", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
