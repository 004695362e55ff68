package sidecar_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Calls held for a person's approval, end to end through the real binary:
// the queue folder answered with `approve` and by hand, the client asked
// with elicitation (go-sdk; the TypeScript SDK in approve_node_test.go),
// expiry, no channel, --approve-session, two answers, a restart.

// approvalOptions: echo and order need approval (order under a limit of
// 100 GBP), everything else is as in baseOptions.
func approvalOptions(approve any, approvals map[string]any) devsetup.Options {
	o := baseOptions()
	o.Tools["echo"] = devsetup.Tool{Action: "provared.data.read", Approve: approve}
	o.Tools["order"] = devsetup.Tool{Action: "supplies.order", Amount: map[string]any{"unit": "GBP", "pointer": "/total"}, Approve: approve}
	o.Limits = []map[string]any{{"action": "supplies.order", "max": 100, "unit": "GBP"}}
	if approvals != nil {
		o.Settings = map[string]any{"approvals": approvals}
	}
	return o
}

func queueDir(h *harness) string { return filepath.Join(filepath.Dir(h.env.SettingsPath), "approvals") }

// waitRequests waits until the queue folder holds n request files and
// returns them, oldest first.
func waitRequests(t *testing.T, h *harness, n int) []approval.File {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		files, _, err := approval.Waiting(queueDir(h), time.Now())
		if err == nil && len(files) >= n {
			return files
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue folder holds %d requests, want %d (%v); stderr:\n%s", len(files), n, err, h.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runExecutor runs the built binary with args and returns its stdout and exit code.
func runExecutor(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(commandsBin, args...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out) + string(ee.Stderr), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// recordsAgree runs our own verify on the book and compare on copy and
// book, after the executor ended: both must pass.
func recordsAgree(t *testing.T, h *harness) {
	t.Helper()
	if out, code := runExecutor(t, "verify", h.env.BookPath, "--trust", h.env.Thumbprint); code != 0 {
		t.Errorf("verify exits %d:\n%s", code, out)
	}
	if out, code := runExecutor(t, "compare", "--config", h.env.SettingsPath); code != 0 {
		t.Errorf("compare exits %d:\n%s", code, out)
	}
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

func callAsync(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, p)
		ch <- callResult{res, err}
	}()
	return ch
}

func await(t *testing.T, h *harness, ch <-chan callResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("the call failed: %v; stderr:\n%s", r.err, h.stderr.String())
		}
		return r.res
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer; stderr:\n%s", h.stderr.String())
	}
	return nil
}

// refusedWith checks a denial's tool result.
func refusedWith(t *testing.T, res *mcp.CallToolResult, code string) {
	t.Helper()
	if !res.IsError || res.Meta[wire.MetaRefused] != code {
		t.Fatalf("want a denial %s, got isError %v meta %v", code, res.IsError, res.Meta)
	}
	if d, _ := res.Meta[wire.MetaDenial].(string); d == "" {
		t.Fatalf("the denial %s names no signed denial: %v", code, res.Meta)
	}
}

func textOf(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// approvedStubs are the stubs that name an executor.approval.
func approvedStubs(t *testing.T, h *harness) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, e := range entriesOf(readBook(t, h.env.BookPath), "stub") {
		if d := detailsOf(e.Content); d[receipt.LabelApproval] != "" {
			out = append(out, d)
		}
	}
	return out
}

func copyLines(t *testing.T, h *harness) []copylog.Line {
	t.Helper()
	return readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor")
}

func answersOf(lines []copylog.Line) (answers, late []copylog.Line) {
	for _, ln := range lines {
		switch ln.Kind {
		case copylog.KindApprovalAnswer:
			answers = append(answers, ln)
		case copylog.KindApprovalLate:
			late = append(late, ln)
		}
	}
	return answers, late
}

// TestApprovalByCommand: a held call waits; `approve --id … --yes` in a
// second terminal lets it through once, with its receipt naming the answer.
func TestApprovalByCommand(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(true, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello", "token": "sk-secret-value"}})
	f := waitRequests(t, h, 1)[0]
	if f.Tool != "echo" || f.Action != "provared.data.read" || strings.Contains(string(f.Arguments), "sk-secret-value") {
		t.Fatalf("request file %+v (arguments %s)", f, f.Arguments)
	}
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server saw %v before the approval", got)
	}
	if out, code := runExecutor(t, "approve", "--config", h.env.SettingsPath, "--id", f.ID, "--yes"); code != 0 {
		t.Fatalf("approve exits %d: %s", code, out)
	}
	res := await(t, h, ch)
	if res.IsError || !strings.HasPrefix(textOf(res), "echo ") {
		t.Fatalf("approved call answered %+v", res)
	}
	if got := receivedCalls(t, h.record); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("the server saw %v, want one echo", got)
	}
	cs.Close()
	h.stop()
	stubs := approvedStubs(t, h)
	if len(stubs) != 1 {
		t.Fatalf("%d approved stubs, want 1", len(stubs))
	}
	answers, _ := answersOf(copyLines(t, h))
	if len(answers) != 1 || answers[0].Channel != approval.ChannelCommand || answers[0].Who == "" {
		t.Fatalf("answers %+v", answers)
	}
	if fp, _ := copylog.AnswerFingerprint(answers[0]); fp != stubs[0][receipt.LabelApproval] {
		t.Fatal("the stub's executor.approval is not the copy's answer")
	}
	recordsAgree(t, h)
}

// TestApprovalFileDeclinedByHand: a person edits the request file to
// "approved": false; the call gets a denial and never reaches the server.
func TestApprovalFileDeclinedByHand(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(true, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "no"}})
	f := waitRequests(t, h, 1)[0]
	path := filepath.Join(queueDir(h), approval.FileName(f.ID))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"approved": null`, `"approved": false`, 1)
	if edited == string(data) {
		edited = strings.Replace(string(data), `"approved":null`, `"approved":false`, 1)
	}
	if edited == string(data) {
		t.Fatalf("the request file holds no \"approved\": null:\n%s", data)
	}
	if err := approval.WriteFileAtomic(queueDir(h), approval.FileName(f.ID), []byte(edited)); err != nil {
		t.Fatal(err)
	}
	refusedWith(t, await(t, h, ch), "approval-declined")
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server saw %v", got)
	}
	cs.Close()
	h.stop()
	if n := len(entriesOf(readBook(t, h.env.BookPath), "refusal")); n != 1 {
		t.Fatalf("%d denials in the book, want 1", n)
	}
	recordsAgree(t, h)
}

// TestApprovalExpires: no answer before the tool's own timeout is a
// refusal; and a call held for approval counts against the slip's limit
// while it waits: a second order that would pass it is refused at once.
func TestApprovalExpires(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(map[string]any{"timeout": 1500}, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "order", Arguments: map[string]any{"total": 60}})
	waitRequests(t, h, 1)
	second, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "order", Arguments: map[string]any{"total": 50}})
	if err != nil {
		t.Fatal(err)
	}
	if !second.IsError || second.Meta[wire.MetaRefused] != "over-limit" {
		t.Fatalf("a second order over the limit with 60 held: %+v", second.Meta)
	}
	refusedWith(t, await(t, h, ch), "approval-expired")
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server saw %v", got)
	}
	cs.Close()
	h.stop()
	recordsAgree(t, h)
}

// TestApprovalNoChannel: when no channel can ask (the queue folder cannot
// take a file and the client declared no elicitation), the call is refused
// at once.
func TestApprovalNoChannel(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(true, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	// The folder is replaced by a file: no request file can be written there.
	if err := os.RemoveAll(queueDir(h)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(queueDir(h), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	refusedWith(t, res, "approval-no-channel")
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server saw %v", got)
	}
	cs.Close()
	h.stop()
	recordsAgree(t, h)
}

// TestApproveSessionNamedInRecords: --approve-session lets held calls
// through, warns at the start, and names itself in the copy's answer that
// every such stub names.
func TestApproveSessionNamedInRecords(t *testing.T) {
	t.Parallel()
	o, record := serverOpts(t, "sdk", approvalOptions(true, nil))
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	h := launchArgs(t, env, "--approve-session")
	h.record = record
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	for _, text := range []string{"a", "b"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("call %s: %v %+v", text, err, res)
		}
	}
	cs.Close()
	h.stop()
	if !strings.Contains(h.stderr.String(), "--approve-session") {
		t.Fatalf("no warning about --approve-session at the start:\n%s", h.stderr.String())
	}
	answers, _ := answersOf(copyLines(t, h))
	if len(answers) != 2 {
		t.Fatalf("%d answers, want 2", len(answers))
	}
	byFP := map[string]bool{}
	for _, a := range answers {
		if a.Channel != approval.ChannelSession || !strings.Contains(a.Who, "--approve-session") {
			t.Fatalf("answer %+v does not name --approve-session", a)
		}
		f, _ := copylog.AnswerFingerprint(a)
		byFP[f] = true
	}
	for _, d := range approvedStubs(t, h) {
		if !byFP[d[receipt.LabelApproval]] {
			t.Fatal("a stub names no --approve-session answer")
		}
	}
	recordsAgree(t, h)
}

// elicitingClient connects a go-sdk client that declares elicitation and
// answers with handle, negotiating version ("" = the SDK's default).
func elicitingClient(ctx context.Context, t *testing.T, h *harness, version string, handle func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "eliciting-client", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: handle})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: nopReadCloser{h.out}, Writer: h.in}, opts)
	if err != nil {
		t.Fatalf("connecting: %v; stderr:\n%s", err, h.stderr.String())
	}
	return cs
}

// TestApprovalElicitationGoSDK: go-sdk clients asked through the client:
// 2025-11-25 and 2025-06-18 with elicitation/create, 2026-07-28 with an
// input_required result answered in the retry. Accepted runs once; declined
// never reaches the server; the executor's question never reaches it either.
func TestApprovalElicitationGoSDK(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-06-18", "2025-11-25", ""} {
		for _, yes := range []bool{true, false} {
			name := version
			if name == "" {
				name = "2026-07-28"
			}
			if yes {
				name += " accept"
			} else {
				name += " decline"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := startWith(t, "sdk", approvalOptions(true, nil))
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				var asked []string
				var mu sync.Mutex
				cs := elicitingClient(ctx, t, h, version, func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, r.Params.Message)
					mu.Unlock()
					if yes {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
					}
					return &mcp.ElicitResult{Action: "decline"}, nil
				})
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi", "password": "hunter2"}})
				if err != nil {
					t.Fatalf("call: %v; stderr:\n%s", err, h.stderr.String())
				}
				mu.Lock()
				if len(asked) != 1 || !strings.Contains(asked[0], "echo") || strings.Contains(asked[0], "hunter2") {
					t.Fatalf("the client was asked %q", asked)
				}
				mu.Unlock()
				if yes {
					if res.IsError || !strings.HasPrefix(textOf(res), "echo ") {
						t.Fatalf("accepted call answered %+v", res)
					}
					if got := receivedCalls(t, h.record); !slices.Equal(got, []string{"echo"}) {
						t.Fatalf("the server saw %v", got)
					}
				} else {
					refusedWith(t, res, "approval-declined")
					if got := receivedCalls(t, h.record); len(got) != 0 {
						t.Fatalf("the server saw %v", got)
					}
				}
				for _, m := range serverLines(t, h.record) {
					b, _ := json.Marshal(m)
					if m["method"] == "elicitation/create" || m["method"] == nil || strings.Contains(string(b), approval.InputKey) || strings.Contains(string(b), "requestState") {
						t.Fatalf("the server saw the executor's question or its answer: %s", b)
					}
				}
				cs.Close()
				h.stop()
				answers, _ := answersOf(copyLines(t, h))
				want := approval.ChannelElicitation
				if version == "" {
					want = approval.ChannelInput
				}
				if len(answers) != 1 || answers[0].Channel != want || answers[0].Who != approval.WhoClient || (answers[0].Answer == copylog.AnswerApproved) != yes {
					t.Fatalf("answers %+v", answers)
				}
				recordsAgree(t, h)
			})
		}
	}
}

// TestApprovalFirstAnswerWins: the client is asked and does not answer
// until the queue has; the queue's yes decides, the client's later no is
// recorded as too late.
func TestApprovalFirstAnswerWins(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(true, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	queueAnswered := make(chan struct{})
	cs := elicitingClient(ctx, t, h, "2025-11-25", func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		select {
		case <-queueAnswered:
		case <-ctx.Done():
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	})
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "race"}})
	f := waitRequests(t, h, 1)[0]
	if _, err := approval.AnswerFile(queueDir(h), f.ID, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	res := await(t, h, ch)
	close(queueAnswered)
	if res.IsError {
		t.Fatalf("the queue's yes came first, and the call was refused: %+v", res.Meta)
	}
	if got := receivedCalls(t, h.record); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("the server saw %v", got)
	}
	cs.Close()
	h.stop()
	answers, _ := answersOf(copyLines(t, h))
	if len(answers) != 1 || answers[0].Channel != approval.ChannelCommand || answers[0].Answer != copylog.AnswerApproved {
		t.Fatalf("answers %+v", answers)
	}
	recordsAgree(t, h)
}

// TestApprovalPendingBurnedAndRestart: with pendingAfter the call is
// answered "waiting" with its request id; a call naming that id with other
// arguments burns it (both refused); a fresh request answered while the
// executor is down is used by the identical call after the restart, exactly
// once.
func TestApprovalPendingBurnedAndRestart(t *testing.T) {
	t.Parallel()
	o, record := serverOpts(t, "sdk", approvalOptions(true, map[string]any{"pendingAfter": 300}))
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	h := launchArgs(t, env)
	h.record = record
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs := h.client(ctx)
	call := func(cs *mcp.ClientSession, text, named string) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}
		if named != "" {
			p.Meta = mcp.Meta{approval.MetaApproval: named}
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("call: %v; stderr:\n%s", err, h.stderr.String())
		}
		return res
	}
	pending := func(res *mcp.CallToolResult) string {
		t.Helper()
		id, _ := res.Meta[approval.MetaApproval].(string)
		if !res.IsError || id == "" || !strings.Contains(textOf(res), "waiting for a person") {
			t.Fatalf("want a waiting answer, got %+v", res)
		}
		return id
	}
	// Burned: the pending request named with other arguments.
	id := pending(call(cs, "one", ""))
	refusedWith(t, call(cs, "other", id), "approval-burned")
	refusedWith(t, call(cs, "one", id), "approval-burned")

	// A fresh request; answered while the executor is down.
	id2 := pending(call(cs, "two", ""))
	if id2 == id {
		t.Fatal("a burned request was asked again")
	}
	if again := pending(call(cs, "two", id2)); again != id2 {
		t.Fatalf("the identical call did not attach to its request: %s, want %s", again, id2)
	}
	cs.Close()
	h.stop()
	if out, code := runExecutor(t, "approve", "--config", env.SettingsPath, "--id", id2, "--yes"); code != 0 {
		t.Fatalf("approve exits %d: %s", code, out)
	}
	h2 := launchArgs(t, env)
	h2.record = record
	cs2 := h2.client(ctx)
	// The answer in the file is read at the start; the retry runs once.
	deadline := time.Now().Add(20 * time.Second)
	var res *mcp.CallToolResult
	for {
		res = call(cs2, "two", id2)
		if !res.IsError || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res.IsError || !strings.HasPrefix(textOf(res), "echo ") {
		t.Fatalf("the approved retry after the restart answered %+v", res)
	}
	// Used: the same call again is a new request, not a second run.
	if id3 := pending(call(cs2, "two", "")); id3 == id2 {
		t.Fatal("a used approval was offered again")
	}
	if got := receivedCalls(t, record); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("the server saw %v, want one echo in both runs", got)
	}
	cs2.Close()
	h2.stop()
	recordsAgree(t, h2)
}

// TestHeldCallKeepsItsSlotAndCanBeCancelled: a held call keeps its place
// among maxWaiting (a second call is not taken), and the client's
// cancellation withdraws it: it never reaches the server, and the slot is
// free again.
func TestHeldCallKeepsItsSlotAndCanBeCancelled(t *testing.T) {
	t.Parallel()
	o := approvalOptions(true, nil)
	o.Settings = map[string]any{"maxWaiting": 1}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	callCtx, cancelCall := context.WithCancel(ctx)
	ch := callAsync(callCtx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "held"}})
	waitRequests(t, h, 1)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail"}); err == nil || !strings.Contains(err.Error(), "too many calls are waiting") {
		t.Fatalf("a second call beside a held one with maxWaiting 1: %v", err)
	}
	cancelCall()
	if r := <-ch; r.err == nil {
		t.Fatal("the cancelled call got an answer")
	}
	// The slot comes back once the executor has withdrawn the call.
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail"})
		if err == nil {
			if !res.IsError || textOf(res) != "it failed" {
				t.Fatalf("the call after the withdrawn one: %+v", res)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held call's slot was not freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := receivedCalls(t, h.record); !slices.Equal(got, []string{"fail"}) {
		t.Fatalf("the server saw %v, want only fail", got)
	}
	cs.Close()
	h.stop()
	if n := copyKinds(copyLines(t, h))[copylog.KindWithdrawn]; n != 1 {
		t.Fatalf("%d withdrawn lines, want 1", n)
	}
	recordsAgree(t, h)
}

// TestElicitationEndsWithTheClient: a client asked by elicitation/create
// that closes its input without answering has said no; the call is refused,
// never sent, and the executor ends without waiting for the expiry.
func TestElicitationEndsWithTheClient(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(true, nil))
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if line := h.recv(); !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize: %s", line)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	line := h.recv()
	var ask struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Params struct {
			Mode    *string `json:"mode"`
			Message string  `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &ask); err != nil || ask.Method != "elicitation/create" || !strings.HasPrefix(ask.ID, "provared-") || ask.Params.Mode != nil {
		t.Fatalf("want the executor's own elicitation/create (no mode for 2025-06-18), got %s", line)
	}
	h.stop()
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server saw %v", got)
	}
	answers, _ := answersOf(copyLines(t, h))
	if len(answers) != 1 || answers[0].Channel != approval.ChannelElicitation || answers[0].Answer != copylog.AnswerDeclined {
		t.Fatalf("answers %+v", answers)
	}
	recordsAgree(t, h)
}

// TestApproveSessionNotInSettings: --approve-session is a flag of stdio
// and serve only; the settings file cannot turn it on.
func TestApproveSessionNotInSettings(t *testing.T) {
	t.Parallel()
	for _, member := range []map[string]any{
		{"approveSession": true},
		{"approvals": map[string]any{"approveSession": true}},
	} {
		o := approvalOptions(true, nil)
		o.Settings = member
		o, _ = serverOpts(t, "sdk", o)
		env, err := devsetup.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := settings.Load(env.SettingsPath); err == nil {
			t.Fatalf("settings with %v loaded", member)
		}
	}
}
