//go:build integration

package keysintegration_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// session runs `mcp-executor stdio` with the go-sdk client: the tool server
// reports its environment (it holds the credential, the passEnv variables
// and nothing else of the executor's), two allowed calls are answered, one
// call outside the slip is refused; the executor ends with exit 0 when the
// client closes.
func (s *setup) session(t *testing.T, credential string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cmd := exec.Command(executorBin, "stdio", "--config", s.settings)
	cmd.Env, cmd.Dir = s.execEnv, s.dir
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Our own pipe for stdout, so that Wait does not close it under the client.
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stdout := &syncbuf.Buffer{}
	defer func() {
		s.record("stdout of stdio (the MCP stream)", stdout.String())
		s.record("stderr of stdio", stderr.String())
		if t.Failed() {
			t.Logf("executor stderr:\n%s", stderr.String())
		}
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "keysintegration-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(outR, stdout)), Writer: in}, nil)
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("connecting to the executor: %v\nstderr:\n%s", err, stderr.String())
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "env", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("env: %v %s", err, resultText(res))
	}
	var seen map[string]string
	if err := json.Unmarshal([]byte(resultText(res)), &seen); err != nil {
		t.Fatalf("env answer: %v", err)
	}
	want := map[string]string{
		serverEnv:     canon.Fingerprint([]byte("on")),
		credentialVar: canon.Fingerprint([]byte(credential)),
		"PATH":        canon.Fingerprint([]byte(os.Getenv("PATH"))),
		"HOME":        canon.Fingerprint([]byte(s.home)),
	}
	for name, fp := range want {
		switch got, ok := seen[name]; {
		case !ok:
			t.Errorf("the tool server does not see %s", name)
		case got != fp:
			t.Errorf("the tool server sees %s with another value than the executor was to give it", name)
		}
	}
	var extra []string
	for name := range seen {
		if _, ok := want[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("the tool server sees variables it was not given: %v", extra)
	}
	if _, ok := seen[canaryVar]; ok {
		t.Errorf("the executor's own %s reached the tool server", canaryVar)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "hello") {
		t.Fatalf("echo: %v %s", err, resultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"to": "someone"}})
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "Not taken by the executor: ") {
		t.Errorf("send (outside the slip): %v, isError %v, %q", err, res != nil && res.IsError, resultText(res))
	}

	if err := cs.Close(); err != nil && !errors.Is(err, io.EOF) {
		t.Logf("closing the client: %v", err)
	}
	in.Close()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the executor did not end after its client closed")
	}
	outR.Close()
	if err != nil {
		t.Errorf("the executor ended with %v", err)
	}
}

func resultText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// verifyAndCompare runs `verify` with the trusted thumbprint (intact, within
// the slip, one countersigned stub per allowed call, one refusal) and
// `compare` (exit 0).
func (s *setup) verifyAndCompare(t *testing.T) {
	t.Helper()
	book := filepath.Join(s.dir, "book.jsonl")
	code, out, errOut := s.run(t, "verify", book, "--trust", s.thumb, "--json")
	var rep struct {
		Intact, WithinSlips bool
		Counts              struct{ Slips, Stubs, Countersigned, Refusals int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s\n%s", err, out, errOut)
	}
	if code != 0 || !rep.Intact || !rep.WithinSlips {
		t.Errorf("verify: exit %d, intact %v, within slips %v\n%s\n%s", code, rep.Intact, rep.WithinSlips, out, errOut)
	}
	if c := rep.Counts; c.Slips != 1 || c.Stubs != 2 || c.Countersigned != 2 || c.Refusals != 1 {
		t.Errorf("verify counts %+v; want 1 slip, 2 stubs both countersigned, 1 refusal", c)
	}
	code, out, _ = s.run(t, "verify", book, "--trust", s.thumb)
	if code != 0 || !strings.Contains(out, ": intact; every stub is within its slip") {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
	if code, out, errOut := s.run(t, "compare", "--config", s.settings); code != 0 {
		t.Errorf("compare: exit %d\n%s\n%s", code, out, errOut)
	}
}
