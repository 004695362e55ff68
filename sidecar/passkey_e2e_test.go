package sidecar_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

// Calls under a slip that asks for the person's own approval, end to end
// through the real binary (issue 14). The development passkey that signed
// the slip (receipts/passkey.DevPasskey, in this test process) signs the
// approvals, declines and the cancellation in place of the browser: it
// writes exactly the files the page writes (<queue>/<id>.signed, the
// cancellation beside the slip).

// passkeyOptions: the slip asks for an approval of provared.data.read
// (tool echo); no tool rule holds calls.
func passkeyOptions() devsetup.Options {
	o := baseOptions()
	o.Requires = []map[string]any{{"need": "approval", "action": "provared.data.read"}}
	o.Settings = map[string]any{"approvals": map[string]any{"timeout": 20000}}
	return o
}

// waitPrepared waits until the queue folder holds n prepared approvals and
// returns them, by request id.
func waitPrepared(t *testing.T, h *harness, n int) []page.Prepared {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		names, _ := filepath.Glob(filepath.Join(queueDir(h), "*"+page.PreparedSuffix))
		if len(names) >= n {
			sort.Strings(names)
			var out []page.Prepared
			for _, name := range names {
				data, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				var p page.Prepared
				if err := json.Unmarshal(data, &p); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out = append(out, p)
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue folder holds %d prepared approvals, want %d; stderr:\n%s", len(names), n, h.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signAnswer writes the passkey's answer to a prepared approval: the
// assembled approval, or a signed decline.
func signAnswer(t *testing.T, h *harness, p page.Prepared, approve bool) {
	t.Helper()
	prep, err := p.Approval()
	if err != nil {
		t.Fatal(err)
	}
	f := page.Signed{Request: p.Request}
	if approve {
		f.Approval = canon.MustMarshal(signedWithPasskey(t, h.env, prep))
	} else {
		sum := sha256Of(page.DeclineSigningInput(p.Fingerprint))
		a, err := h.env.Passkey.Assert(sum)
		if err != nil {
			t.Fatal(err)
		}
		f.Declined = &page.Assertion{AuthenticatorData: canon.B64(a.AuthenticatorData),
			ClientDataJSON: canon.B64(a.ClientDataJSON), Signature: canon.B64(a.Signature)}
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(queueDir(h), ".tmp-"+p.Request)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(queueDir(h), page.SignedName(p.Request))); err != nil {
		t.Fatal(err)
	}
}

// bookLines are the member names of each book line.
func bookLines(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("book line: %v", err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out = append(out, keys)
	}
	return out
}

func TestPasskeyApprovalDeclineAndCancellation(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", passkeyOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)

	// A call the slip does not ask an approval for goes straight through.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipients": []string{"a"}}}); err != nil || res.IsError {
		t.Fatalf("send: %v %+v", err, res)
	}

	// Approved with the passkey: runs once, its stub and the approval on one line.
	first := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "approved"}})
	p := waitPrepared(t, h, 1)[0]
	if p.Tool != "echo" || p.Action != "provared.data.read" {
		t.Fatalf("prepared %+v", p)
	}
	signAnswer(t, h, p, true)
	res := await(t, h, first)
	if res.IsError || !strings.Contains(textOf(res), "approved") {
		t.Fatalf("the approved call: %+v", res)
	}

	// Declined with the passkey: never reaches the server; a denial.
	second := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "declined"}})
	deadline := time.Now().Add(20 * time.Second)
	var q page.Prepared
	for {
		ps := waitPrepared(t, h, 1)
		if ps[0].Request != p.Request {
			q = ps[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no second prepared approval")
		}
		time.Sleep(20 * time.Millisecond)
	}
	signAnswer(t, h, q, false)
	refusedWith(t, await(t, h, second), "approval-declined")

	// A third call is held; the person cancels the slip: the held call and
	// every later call are refused, with a denial.
	third := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "held at the cancellation"}})
	for {
		ps := waitPrepared(t, h, 1)
		if ps[0].Request != q.Request {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	writeCancellation(t, h.env)
	refusedWith(t, await(t, h, third), "after-cancellation")
	waitQueueEmpty(t, h)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipients": []string{"b"}}})
	if err != nil {
		t.Fatal(err)
	}
	refusedWith(t, res, "after-cancellation")

	cs.Close()
	h.stop()

	if got := receivedCalls(t, h.record); !slices.Equal(got, []string{"send", "echo"}) {
		t.Fatalf("the server received %v, want send and the approved echo only", got)
	}
	lines := bookLines(t, h.env.BookPath)
	var withApproval, cancellations int
	for i, keys := range lines {
		switch {
		case slices.Equal(keys, []string{"approval", "countersignature", "stub"}):
			withApproval++
		case slices.Equal(keys, []string{"cancellation"}):
			cancellations++
			for _, later := range lines[i+1:] {
				if slices.Contains(later, "stub") {
					t.Errorf("a stub follows the cancellation: %v", lines)
				}
			}
		}
	}
	if withApproval != 1 || cancellations != 1 {
		t.Fatalf("book lines %v: want one stub line with its approval and one cancellation", lines)
	}
	res2 := h.checkBook()
	if !res2.Summary.Intact {
		t.Fatalf("not intact")
	}
	recordsAgree(t, h)
}

func sha256Of(b []byte) []byte {
	sum := sha256.Sum256(b)
	return sum[:]
}

// A plain yes (the approve command over the queue file) does not let a
// call through that the slip asks the passkey's approval for: it is refused
// with needs-approval and never reaches the server. A call no one answers
// expires into the same refusal.
func TestPasskeyApprovalNotGivenByAPlainYes(t *testing.T) {
	t.Parallel()
	o := passkeyOptions()
	o.Settings = map[string]any{"approvals": map[string]any{"timeout": 1500}}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)

	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "plain yes"}})
	f := waitRequests(t, h, 1)[0]
	if out, code := runExecutor(t, "approve", "--config", h.env.SettingsPath, "--id", f.ID, "--yes"); code != 0 {
		t.Fatalf("approve exits %d: %s", code, out)
	}
	res := await(t, h, ch)
	refusedWith(t, res, "needs-approval")
	if codes, _ := res.Meta["red.prova/codes"].([]any); len(codes) != 1 || codes[0] != "approval-missing" {
		t.Fatalf("codes %v", res.Meta)
	}

	res = await(t, h, callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "no answer"}}))
	refusedWith(t, res, "needs-approval")

	cs.Close()
	h.stop()
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server received %v", got)
	}
	h.checkBook()
	recordsAgree(t, h)
}

// A cancellation already beside the slip at the start goes into the book
// once (not again at the next start), and every call is refused.
func TestPasskeyCancellationAtStart(t *testing.T) {
	t.Parallel()
	o, rec := serverOpts(t, "sdk", passkeyOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	writeCancellation(t, env)
	for range 2 {
		h := launch(t, env)
		h.record = rec
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs := h.client(ctx)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipients": []string{"a"}}})
		if err != nil {
			t.Fatal(err)
		}
		refusedWith(t, res, "after-cancellation")
		cs.Close()
		h.stop()
		cancel()
		h.checkBook()
		recordsAgree(t, h)
	}
	n := 0
	for _, keys := range bookLines(t, env.BookPath) {
		if slices.Equal(keys, []string{"cancellation"}) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d cancellations in the book, want 1", n)
	}
	if got := receivedCalls(t, rec); len(got) != 0 {
		t.Fatalf("the server received %v", got)
	}
}

// An approved call the executor was sending when it stopped gets its stub
// at the next start with the approval kept beside the queue, on one line,
// naming exactly the details the approval names.
func TestPasskeyApprovedCallRecoveredAtStart(t *testing.T) {
	t.Parallel()
	o, rec := serverOpts(t, "sdk", passkeyOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	call := "provared-1-approved"
	sentAt := time.Now().Add(-30 * time.Second).UTC().Truncate(time.Second)
	details := []record.Detail{
		{Name: receipt.LabelArguments, SHA256: fp(`{"text":"x"}`)},
		record.TextDetail(receipt.LabelToolName, "echo"),
		record.TextDetail(receipt.LabelCall, call),
		record.TextDetail(receipt.LabelRequestID, call),
	}
	prep, err := consent.PrepareApproval(consent.Proposal{Slip: env.Slip.Fingerprint,
		Request: slip.Request{Action: "provared.data.read", With: "executor", Details: details}}, sentAt.Add(-5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	v := signedWithPasskey(t, env, prep)
	queue := filepath.Join(env.Dir, "approvals")
	if err := os.MkdirAll(queue, 0o700); err != nil {
		t.Fatal(err)
	}
	kept, _ := json.Marshal(map[string]any{"approval": v})
	if err := os.WriteFile(filepath.Join(queue, call+".approval"), kept, 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := copylog.Open(env.CopyPath, env.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(copylog.Line{Kind: copylog.KindSent, When: sentAt, Call: call, Tool: "echo", Action: "provared.data.read",
		Slip: env.Slip.Fingerprint, RequestID: call, Details: details}); err != nil {
		t.Fatal(err)
	}
	log.Close()

	h := launch(t, env)
	h.record = rec
	if code := h.stop(); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, h.stderr.String())
	}
	if got := receivedCalls(t, rec); len(got) != 0 {
		t.Errorf("the call was sent again: %v", got)
	}
	h.checkBook()
	lines := bookLines(t, env.BookPath)
	if len(lines) != 2 || !slices.Equal(lines[1], []string{"approval", "countersignature", "stub"}) {
		t.Fatalf("book lines %v", lines)
	}
	if _, err := os.Stat(filepath.Join(queue, call+".approval")); !os.IsNotExist(err) {
		t.Errorf("the kept approval is still there: %v", err)
	}
	recordsAgree(t, h)
}

// signedWithPasskey is prep signed with the env's passkey.
func signedWithPasskey(t *testing.T, env *devsetup.Env, prep *slip.Prepared) map[string]any {
	t.Helper()
	a, err := env.Passkey.Assert(prep.Challenge)
	if err != nil {
		t.Fatal(err)
	}
	v, err := slip.Assemble(prep, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// writeCancellation signs a cancellation of the env's slip with its passkey
// and drops it beside the slip, as the person's signer does.
func writeCancellation(t *testing.T, env *devsetup.Env) {
	t.Helper()
	prep, err := consent.PrepareCancellation(env.Slip.Fingerprint, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v := signedWithPasskey(t, env, prep)
	tmp := page.CancellationPath(env.SlipPath) + ".tmp"
	if err := os.WriteFile(tmp, canon.MustMarshal(v), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, page.CancellationPath(env.SlipPath)); err != nil {
		t.Fatal(err)
	}
}

// A call already with the server when the slip is cancelled is answered,
// and its stub goes into the book before the cancellation; the next call
// is refused.
func TestPasskeyCancellationAfterTheCallsInFlight(t *testing.T) {
	t.Parallel()
	o := passkeyOptions()
	o.Tools["slow"] = devsetup.Tool{Action: "provared.message.send"}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)

	slow := callAsync(ctx, cs, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Contains(receivedCalls(t, h.record), "slow") {
		if time.Now().After(deadline) {
			t.Fatal("the slow call did not reach the server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	writeCancellation(t, h.env)
	// The cancellation is honoured at once: a call made while the slow one
	// is still with the server is refused.
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipients": []string{"a"}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			refusedWith(t, res, "after-cancellation")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancellation was not honoured")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := await(t, h, slow); res.IsError || textOf(res) != "slept" {
		t.Fatalf("the slow call: %+v", res)
	}
	cs.Close()
	h.stop()
	lines := bookLines(t, h.env.BookPath)
	seenCancel := false
	for _, keys := range lines {
		if slices.Equal(keys, []string{"cancellation"}) {
			seenCancel = true
		}
		if seenCancel && slices.Contains(keys, "stub") {
			t.Fatalf("a stub after the cancellation: %v", lines)
		}
	}
	if !seenCancel {
		t.Fatalf("no cancellation in the book: %v", lines)
	}
	h.checkBook()
	recordsAgree(t, h)
}

// A tool whose rule says approve, under a slip that asks for the passkey's
// approval, is held once: the passkey's signed approval lets it through.
func TestPasskeyApprovalOfAnApproveRule(t *testing.T) {
	t.Parallel()
	o := passkeyOptions()
	o.Tools["echo"] = devsetup.Tool{Action: "provared.data.read", Approve: true}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "both"}})
	p := waitPrepared(t, h, 1)[0]
	if n := len(waitRequests(t, h, 1)); n != 1 {
		t.Fatalf("%d requests, want the one", n)
	}
	signAnswer(t, h, p, true)
	if res := await(t, h, ch); res.IsError {
		t.Fatalf("the approved call: %+v", res)
	}
	cs.Close()
	h.stop()
	if got := receivedCalls(t, h.record); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("the server received %v", got)
	}
	lines := bookLines(t, h.env.BookPath)
	if len(lines) != 2 || !slices.Equal(lines[1], []string{"approval", "countersignature", "stub"}) {
		t.Fatalf("book lines %v", lines)
	}
	h.checkBook()
	recordsAgree(t, h)
}

// A call held for a rule's approval when the slip is cancelled is refused
// at once, and never reaches the server.
func TestPasskeyCancellationRefusesCallsHeldForARule(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", approvalOptions(true, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "held"}})
	waitRequests(t, h, 1)
	writeCancellation(t, h.env)
	refusedWith(t, await(t, h, ch), "after-cancellation")
	waitQueueEmpty(t, h)
	cs.Close()
	h.stop()
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Fatalf("the server received %v", got)
	}
	h.checkBook()
	recordsAgree(t, h)
}

// waitQueueEmpty waits until the queue folder holds no request, prepared or
// signed file: after a cancellation the held calls' requests are withdrawn
// (approval.Hub.EndSlip), so that the person is not shown calls that can no
// longer run.
func waitQueueEmpty(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		for _, pattern := range []string{"*.json", "*" + page.PreparedSuffix, "*" + page.SignedSuffix} {
			m, _ := filepath.Glob(filepath.Join(queueDir(h), pattern))
			left = append(left, m...)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue still holds %v after the cancellation; stderr:\n%s", left, h.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Withdrawn, not expired (the files would go at the expiry too).
	withdrawn := 0
	for _, ln := range readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor") {
		if ln.Kind == copylog.KindApprovalEnd {
			if ln.Reason != copylog.EndWithdrawn {
				t.Errorf("request %s ended %q, want %q", ln.Request, ln.Reason, copylog.EndWithdrawn)
			}
			withdrawn++
		}
	}
	if withdrawn == 0 {
		t.Error("no request was withdrawn at the cancellation")
	}
}

// A request kept in the copy across a stop (its call was held when the
// executor stopped) is withdrawn at the next start when the slip was
// cancelled meanwhile: the queue does not show it again.
func TestPasskeyCancellationWithdrawsRestoredRequests(t *testing.T) {
	o, rec := serverOpts(t, "sdk", approvalOptions(true, nil))
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	log, err := copylog.Open(env.CopyPath, env.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	args := fp(`{"text":"held at the stop"}`)
	now := time.Now().UTC()
	if err := log.Append(copylog.Line{Kind: copylog.KindApprovalRequest, When: now, Call: "provared-1-held", Tool: "echo",
		Action: "provared.data.read", Slip: env.Slip.Fingerprint, ApprovalFields: copylog.ApprovalFields{Request: canon.NewID(),
			Arguments: args, Binding: copylog.Binding("echo", "provared.data.read", args, nil, env.Slip.Fingerprint),
			Expires: now.Add(10 * time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	log.Close()
	writeCancellation(t, env)
	h := launch(t, env)
	h.record = rec
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx) // the executor has opened: the hub has restored the request
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "held at the stop"}})
	if err != nil {
		t.Fatal(err)
	}
	refusedWith(t, res, "after-cancellation")
	waitQueueEmpty(t, h)
	cs.Close()
	if code := h.stop(); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, h.stderr.String())
	}
	h.checkBook()
	recordsAgree(t, h)
}
