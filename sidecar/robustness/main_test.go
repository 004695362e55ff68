// Package robustness_test drives the real mcp-executor binary through the
// faults the "Done when" names: kills at each step of a call and at
// random points, a book made read-only and a copy on a full file system
// mid-run, tampering with the copy and the book, and hostile clients and
// servers. Every case ends by checking the records through the binary's own
// `verify` and `compare`.
//
// The test binary is also every tool server the executor starts (run again
// with serverKindEnv set), so that the servers are real child processes.
package robustness_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const (
	serverKindEnv = "MCP_EXECUTOR_ROBUSTNESS_SERVER" // "sdk" or "hostile"
	recordEnv     = "MCP_EXECUTOR_ROBUSTNESS_RECORD" // file the server copies every line it reads to
	faultEnv      = "MCP_EXECUTOR_FAULT"             // the fault point the faultinject build kills itself at
)

// The two builds of the executor: the normal one, and one built with the
// faultinject tag (fault points that kill the process).
var (
	executorBin string
	faultBin    string
	faultBuild  string // why the faultinject build failed, "" when it built
)

func TestMain(m *testing.M) {
	switch os.Getenv(serverKindEnv) {
	case "sdk":
		runSDKServer()
		return
	case "hostile":
		runHostileServer()
		return
	case "forking", "forkchild", "forkgrandchild", "forksetsid":
		runForking(os.Getenv(serverKindEnv))
		return
	}
	dir, err := os.MkdirTemp("", "mcp-executor-robustness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	executorBin = filepath.Join(dir, "mcp-executor")
	build := exec.Command("go", "build", "-o", executorBin, "./cmd/mcp-executor")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "robustness tests: the executor does not build:\n%s\n", out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	faultBin = filepath.Join(dir, "mcp-executor-faultinject")
	build = exec.Command("go", "build", "-tags", "faultinject", "-o", faultBin, "./cmd/mcp-executor")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		faultBuild = string(out)
		faultBin = ""
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
