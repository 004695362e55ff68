package httpe2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// The conformance pair the test env builds (scripts/testenv/conformance.sh).
const (
	conformanceServerEnv = "MCP_EXECUTOR_TEST_CONFORMANCE_SERVER"
	conformanceSuiteEnv  = "MCP_EXECUTOR_TEST_CONFORMANCE_SUITE"
)

// conformancePair returns the go-sdk everything-server binary and the suite's command.
func conformancePair(t testing.TB) (server, suite string) {
	t.Helper()
	server, suite = os.Getenv(conformanceServerEnv), os.Getenv(conformanceSuiteEnv)
	for name, v := range map[string]string{conformanceServerEnv: server, conformanceSuiteEnv: suite} {
		if v == "" {
			t.Fatalf("%s is not set: run ./scripts/test.sh setup (or eval \"$(scripts/testenv/conformance.sh start)\") in the repository's folder", name)
		}
		if _, err := os.Stat(v); err != nil {
			t.Fatalf("%s=%s: %v: run ./scripts/test.sh setup in the repository's folder", name, v, err)
		}
	}
	return server, suite
}

// serverTools lists the tools a stdio server offers, asking it with go-sdk's client.
func serverTools(t *testing.T, command string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "httpe2e-lister", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(command)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// resultDir is the timestamp the suite puts at the end of a result folder's name.
var resultDir = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

// checkResult is one check of a conformance scenario.
type checkResult struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  string `json:"errorMessage"`
}

// runSuite runs the conformance suite's server scenarios (--suite all) against url and returns each
// scenario's checks.
func runSuite(t *testing.T, suite, url string) map[string][]checkResult {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite, "server", "--url", url, "--suite", "all", "-o", out)
	cmd.Dir = out
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	// The suite exits non-zero when a check fails; the checks themselves are compared below.
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish in 10 minutes\n%s", cut(log.String(), 5000))
	}
	results := map[string][]checkResult{}
	dirs, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var checks []checkResult
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		// server-<scenario>-<timestamp>
		name := resultDir.ReplaceAllString(strings.TrimPrefix(d.Name(), "server-"), "")
		results[name] = checks
	}
	if len(results) == 0 {
		t.Fatalf("the conformance suite wrote no results\n%s", cut(log.String(), 5000))
	}
	return results
}

// tally counts a scenario's passed and failed checks as the suite's summary does.
func tally(checks []checkResult) (passed, failed int) {
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			passed++
		case "FAILURE":
			failed++
		}
	}
	return passed, failed
}

// statusOf is each check's status by id (with a counter for repeated ids).
func statusOf(checks []checkResult) map[string]string {
	m := map[string]string{}
	seen := map[string]int{}
	for _, c := range checks {
		if c.Status == "INFO" {
			continue
		}
		seen[c.ID]++
		m[fmt.Sprintf("%s#%d", c.ID, seen[c.ID])] = c.Status
	}
	return m
}

// freePort is a loopback port nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close() // only its number is wanted
	return port
}

// TestConformanceSuiteThroughExecutor runs the MCP conformance suite (server scenarios, --suite all)
// against `serve --listen http://...` in front of go-sdk's conformance everything-server on stdio, and
// against that server's own streamable HTTP transport (stateful), and compares: every check that passes
// there passes here, none fails here that does not fail there, and the book is intact.
func TestConformanceSuiteThroughExecutor(t *testing.T) {
	server, suite := conformancePair(t)
	tools := map[string]devsetup.Tool{}
	for _, name := range serverTools(t, server) {
		tools[name] = devsetup.Tool{Action: "provared.data.read"}
	}
	env, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: server, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	// The suite opens a session per scenario (about 33) and ends none with DELETE.
	s := serveHTTP(t, env, "--max-sessions", "64")

	port := freePort(t)
	direct := exec.Command(server, "-http", "127.0.0.1:"+port, "-stateless=false")
	directLog := &syncbuf.Buffer{}
	direct.Stdout, direct.Stderr = directLog, directLog
	if err := direct.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = direct.Process.Kill(); _ = direct.Wait() })
	directURL := "http://127.0.0.1:" + port + "/mcp"
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(directURL)
		if err == nil {
			_ = resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the everything-server's own HTTP did not come up\n%s", directLog)
		}
		time.Sleep(50 * time.Millisecond)
	}

	ours := runSuite(t, suite, s.url)
	theirs := runSuite(t, suite, directURL)

	var names []string
	for n := range theirs {
		names = append(names, n)
	}
	sort.Strings(names)
	var totalOurs, totalTheirs [2]int
	for _, n := range names {
		op, of := tally(ours[n])
		tp, tf := tally(theirs[n])
		totalOurs[0], totalOurs[1] = totalOurs[0]+op, totalOurs[1]+of
		totalTheirs[0], totalTheirs[1] = totalTheirs[0]+tp, totalTheirs[1]+tf
		if _, ok := ours[n]; !ok {
			t.Errorf("scenario %s: no result through the executor", n)
			continue
		}
		mine, ts := statusOf(ours[n]), statusOf(theirs[n])
		for id, st := range ts {
			switch {
			case st == "SUCCESS" && mine[id] != "SUCCESS":
				t.Errorf("scenario %s, check %s: %s directly, %s through the executor: %s", n, id, st, mine[id], errorOf(ours[n], id))
			case st != "FAILURE" && mine[id] == "FAILURE":
				t.Errorf("scenario %s, check %s: fails through the executor only: %s", n, id, errorOf(ours[n], id))
			}
		}
		for id, st := range mine {
			if _, ok := ts[id]; !ok && st == "FAILURE" {
				t.Errorf("scenario %s, check %s: fails through the executor only: %s", n, id, errorOf(ours[n], id))
			}
			if ts[id] != st {
				t.Logf("scenario %s, check %s: %s directly, %s through the executor", n, id, ts[id], st)
			}
		}
	}
	t.Logf("the everything-server's own HTTP: %d passed, %d failed; through the executor: %d passed, %d failed",
		totalTheirs[0], totalTheirs[1], totalOurs[0], totalOurs[1])

	s.stop()
	verifyBook(t, env)
}

func errorOf(checks []checkResult, id string) string {
	base, _, _ := strings.Cut(id, "#")
	for _, c := range checks {
		if c.ID == base && c.Error != "" {
			return c.Error
		}
	}
	return ""
}
