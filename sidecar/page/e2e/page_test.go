package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// TestPersonsPageWithTheExecutor is issue 14's "Done when" with real
// processes: the person registers a passkey in the page (`mcp-executor
// page`, with the registration code it printed) in headless Chromium and signs a slip that requires their approval
// for supplies.order; the executor (`mcp-executor stdio`, a go-sdk client
// on its pipes, a tool server as its child) runs under that slip. One held
// call is approved in the page and runs once, its stub and approval on one
// book line; another is declined and never reaches the server; a
// cancellation the agent forges beside the slip is not honoured; the person
// cancels the slip in the page: a call then held is refused at once (its
// request withdrawn from the queue and the page), and so is the next call.
// The book is intact under `verify`, `compare` agrees, and the approval and
// the cancellation in the book pass the format's checks.
func TestPersonsPageWithTheExecutor(t *testing.T) {
	t.Parallel()
	f := newFolder(t)
	pg := startPage(t, f.env.SettingsPath)
	origin := pg.origin
	if pg.code == "" {
		t.Fatalf("the page printed no registration code; stderr:\n%s", pg.stderr.String())
	}
	ctx := browser(t)

	// 1. Register the passkey with the registration code the page printed
	// on its stderr; the page shows its thumbprint; the person puts it in
	// agent.issuerKeys.
	step(t, ctx, "opening the page", chromedp.Navigate(origin+"/"), chromedp.WaitVisible(chromedp.ID("register")))
	step(t, ctx, "entering the code", chromedp.SetValue(chromedp.ID("register-code"), pg.code))
	screenshot(t, ctx, "page-register")
	step(t, ctx, "registering", chromedp.Click(chromedp.ID("register")), chromedp.WaitVisible(chromedp.ID("passkey-info")))
	reg := registered(t, f)
	if got := text(t, ctx, "#thumbprint"); got != reg.Thumbprint || reg.Origin != origin || reg.RPID != "localhost" || reg.Alg != "ES256" {
		t.Fatalf("the page shows thumbprint %q; registered %+v", got, reg)
	}
	f.trust(t, []string{reg.Thumbprint})
	waitFor(t, "the page to see the passkey trusted", func() bool {
		return strings.Contains(text(t, ctx, "#trust"), "The settings trust it")
	})
	screenshot(t, ctx, "page-passkey")

	// 2. Sign a slip from what `keys --json` prints: actions supplies.order
	// and supplies.list, the person's approval required for supplies.order.
	permission, err := exec.Command(executorBin, "keys", "--config", f.env.SettingsPath, "--json").Output()
	if err != nil {
		t.Fatalf("keys --json: %v", err)
	}
	now := time.Now().UTC()
	step(t, ctx, "filling in the slip",
		chromedp.Click(chromedp.CSS("#slip-form-box summary")),
		chromedp.WaitVisible(chromedp.ID("permission")),
		chromedp.SetValue(chromedp.ID("permission"), strings.TrimSpace(string(permission))),
		chromedp.SetValue(chromedp.ID("issuer-name"), "Sam Example"),
		chromedp.SetValue(chromedp.ID("agent-name"), "Supplies agent"),
		chromedp.SetValue(chromedp.ID("actions"), "supplies.order, supplies.list"),
		chromedp.SetValue(chromedp.ID("approval-actions"), "supplies.order"),
		chromedp.SetValue(chromedp.ID("limits"), "supplies.order max 500 GBP\nsupplies.order count 10 per 86400"),
		chromedp.SetValue(chromedp.ID("valid-from"), canon.FormatTime(now.Add(-time.Hour))),
		chromedp.SetValue(chromedp.ID("valid-until"), canon.FormatTime(now.Add(30*24*time.Hour))),
		chromedp.SetValue(chromedp.ID("purpose"), "Order office supplies for the team."),
		chromedp.Click(chromedp.ID("review")),
		chromedp.WaitVisible(chromedp.ID("slip-review-box")))
	if review := text(t, ctx, "#slip-review"); !strings.Contains(review, `"need": "approval"`) || !strings.Contains(review, `"origin": "`+origin+`"`) {
		t.Fatalf("the review does not show the approval condition: %s", review)
	}
	screenshot(t, ctx, "page-slip-review")
	step(t, ctx, "signing the slip", chromedp.Click(chromedp.ID("sign-slip")), chromedp.WaitVisible(chromedp.ID("slip-info")))
	closeSlipForm(t, ctx)
	s := readSlip(t, f, reg.Thumbprint)
	if got := text(t, ctx, "#slip-fingerprint"); got != s.Fingerprint {
		t.Fatalf("the page shows slip %q, saved %s", got, s.Fingerprint)
	}
	if !slices.ContainsFunc(s.Requires, func(r slip.Condition) bool { return r.Need == "approval" && r.Action == "supplies.order" }) {
		t.Fatalf("the slip requires %+v", s.Requires)
	}
	if code, out := run(t, "check", "--config", f.env.SettingsPath); code != 0 {
		t.Fatalf("check with the page's slip exits %d:\n%s", code, out)
	}

	// 3. The executor under that slip: a list call goes straight through;
	// two order calls are held and the page shows each.
	cctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit)
	defer cancel()
	ex := startExecutor(t, cctx, f.env.SettingsPath)
	if res := ex.await(t, ex.callAsync(cctx, "list", map[string]any{})); res.IsError {
		t.Fatalf("list: %+v", res)
	}
	first := ex.callAsync(cctx, "order", map[string]any{"item": "paper", "quantity": 3, "total": 150})
	p1 := f.waitPrepared(t, ex.stderr)
	secret := "sk-live-4f9a8b7c6d5e4f3a2b1c"
	second := ex.callAsync(cctx, "order", map[string]any{"item": "pens", "apiKey": secret, "total": 40})
	p2 := f.waitPrepared(t, ex.stderr, p1.Request)
	li := func(p page.Prepared) string { return `#waiting li[data-request="` + p.Request + `"]` }
	step(t, ctx, "seeing both calls", chromedp.WaitVisible(chromedp.CSS(li(p1))), chromedp.WaitVisible(chromedp.CSS(li(p2))))
	for _, c := range []struct {
		p      page.Prepared
		amount string
		args   []string
	}{
		{p1, "150 GBP", []string{`"item": "paper"`, `"quantity": 3`}},
		{p2, "40 GBP", []string{`"item": "pens"`, `"apiKey": "[REDACTED:key:`}},
	} {
		shown := text(t, ctx, li(c.p))
		want := append([]string{"Tool order", "action supplies.order", "amount " + c.amount,
			"Arguments fingerprint " + c.p.ArgumentsSHA256, "approval " + c.p.Fingerprint, "slip " + s.Fingerprint}, c.args...)
		for _, w := range want {
			if !strings.Contains(shown, w) {
				t.Errorf("the page shows %q for request %s, without %q", shown, c.p.Request, w)
			}
		}
		if strings.Contains(shown, secret) {
			t.Errorf("the page shows the secret: %s", shown)
		}
		prep, err := c.p.Approval()
		if err != nil {
			t.Fatal(err)
		}
		if prop, err := consent.ProposalOf(prep); err != nil || !slices.Contains(prop.Details, record.Detail{Name: "provared.arguments", SHA256: c.p.ArgumentsSHA256}) {
			t.Errorf("the prepared approval does not name the arguments the page shows: %+v %v", prop, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	screenshot(t, ctx, "page-waiting")

	// 4. Approve the first in the page: it runs.
	step(t, ctx, "approving", chromedp.Click(chromedp.CSS(li(p1)+" button.approve")))
	if res := ex.await(t, first); res.IsError || !strings.Contains(textOf(res), `"item":"paper"`) {
		t.Fatalf("the approved call: %+v", res)
	}

	// 5. Decline the second: a denial, and the server never sees it.
	step(t, ctx, "declining", chromedp.Click(chromedp.CSS(li(p2)+" button.decline")))
	declined := refusedWith(t, ex.await(t, second), "approval-declined")
	step(t, ctx, "the list empties", chromedp.WaitVisible(chromedp.ID("waiting-none")))

	// 6. The agent, which can write beside the slip but cannot sign with the
	// person's passkey, drops a cancellation signed by another passkey:
	// the executor logs that it does not check, and goes on.
	forgeCancellation(t, f, s, origin)
	waitFor(t, "the executor to read the forged cancellation", func() bool {
		return strings.Contains(ex.stderr.String(), "a cancellation file does not check")
	}, ex.stderr)
	if res := ex.await(t, ex.callAsync(cctx, "list", map[string]any{})); res.IsError {
		t.Fatalf("a forged cancellation stopped the calls: %+v", res)
	}

	// 7. A third call is held; the person cancels the slip in the page: the
	// held call is refused at once, and so is the next call.
	third := ex.callAsync(cctx, "order", map[string]any{"item": "staples", "total": 20})
	p3 := f.waitPrepared(t, ex.stderr, p1.Request, p2.Request)
	step(t, ctx, "seeing the third call", chromedp.WaitVisible(chromedp.CSS(li(p3))))
	step(t, ctx, "cancelling", chromedp.Click(chromedp.ID("cancel-slip")), chromedp.WaitVisible(chromedp.ID("slip-cancelled")))
	heldAtCancel := refusedWith(t, ex.await(t, third), "after-cancellation")
	waitFor(t, "the cancellation in the book", func() bool { return countKeys(t, f.env.BookPath, "cancellation") == 1 }, ex.stderr)
	afterCancel := refusedWith(t, ex.await(t, ex.callAsync(cctx, "list", map[string]any{})), "after-cancellation")
	// The held call's request is withdrawn: its queue and prepared files go,
	// and the page no longer lists it.
	waitFor(t, "the queue to empty", func() bool { return queueFiles(t, f.queue) == 0 }, ex.stderr)
	step(t, ctx, "the list empties again", chromedp.WaitVisible(chromedp.ID("waiting-none")))
	screenshot(t, ctx, "page-cancelled")
	if code := ex.stop(t); code != 0 {
		t.Fatalf("the executor exits %d; stderr:\n%s", code, ex.stderr.String())
	}
	// Nothing is left in the queue: no request, prepared or signed file, no
	// approval kept for a restart.
	if left, err := os.ReadDir(f.queue); err != nil || len(left) != 0 {
		t.Errorf("the queue holds %v (%v)", left, err)
	}

	// 8. What reached the server: the list calls and the approved order, once.
	if got := receivedCalls(t, f.record); len(got) != 3 || got[0] != "list {}" || !strings.Contains(got[1], `"item":"paper"`) || got[2] != "list {}" {
		t.Fatalf("the server received %q: want the two list calls and the approved order only", got)
	}

	// 9. The book, through the binary: intact, and the copy agrees.
	if code, out := run(t, "verify", f.env.BookPath, "--trust", reg.Thumbprint); code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("verify exits %d:\n%s", code, out)
	}
	if code, out := run(t, "compare", "--config", f.env.SettingsPath); code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("compare exits %d:\n%s", code, out)
	}
	checkBookLines(t, f, s, p1, []string{declined, heldAtCancel, afterCancel})
}

// checkBookLines reads the book line by line: the slip, the list call's
// stub, the approved call's stub with its approval on the same line, one
// refusal for each denial, the stub of the list call made beside the forged
// cancellation, the cancellation, and no stub after it. The approval and
// the cancellation pass the format's checks (receipts/slip and
// receipts/consent, which the format's vectors test), against the slip the
// browser's passkey signed.
func checkBookLines(t *testing.T, f *folder, s *slip.Slip, approved page.Prepared, denials []string) {
	t.Helper()
	var kinds []string
	var refusals []string
	cancelled := false
	for i, line := range bookLines(t, f.env.BookPath) {
		kinds = append(kinds, strings.Join(sortedKeys(line), "+"))
		if cancelled && line["stub"] != nil {
			t.Errorf("line %d: a stub after the cancellation", i)
		}
		switch {
		case line["refusal"] != nil:
			r, err := record.Parse(line["refusal"], "refusal")
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			refusals = append(refusals, r.Fingerprint)
		case line["approval"] != nil:
			checkApprovalLine(t, s, approved, line)
		case line["cancellation"] != nil:
			cancelled = true
			c, err := slip.ReadCancellation(line["cancellation"])
			if err != nil {
				t.Fatalf("the cancellation in the book: %v", err)
			}
			if err := slip.VerifyIssued(s, c.Record); err != nil {
				t.Errorf("the cancellation is not the slip issuer's: %v", err)
			}
			if _, err := consent.CheckCancellation(line["cancellation"], s); err != nil {
				t.Errorf("the cancellation does not check: %v", err)
			}
			file, err := page.ReadCancellation(page.CancellationPath(f.env.SlipPath), s)
			if err != nil || file == nil || file.Record.Fingerprint != c.Record.Fingerprint {
				t.Errorf("the book's cancellation is not the page's file: %v", err)
			}
		}
	}
	want := []string{"slip", "countersignature+stub", "approval+countersignature+stub", "refusal", "countersignature+stub"}
	if len(kinds) != 8 || !slices.Equal(kinds[:5], want) || !slices.Contains(kinds[5:], "cancellation") {
		t.Fatalf("the book's lines are %v: want %v, three refusals and the cancellation", kinds, want)
	}
	slices.Sort(refusals)
	denials = slices.Clone(denials)
	slices.Sort(denials)
	if !slices.Equal(refusals, denials) {
		t.Fatalf("the book's refusals %v are not the denials the agent was given %v", refusals, denials)
	}
}

// checkApprovalLine: the approval is the one prepared for the approved
// call, signed by the slip's issuer, and names exactly what its stub names.
func checkApprovalLine(t *testing.T, s *slip.Slip, approved page.Prepared, line map[string]any) {
	t.Helper()
	a, err := slip.ReadApproval(line["approval"])
	if err != nil {
		t.Fatalf("the approval in the book: %v", err)
	}
	if a.Record.Fingerprint != approved.Fingerprint || a.Slip != s.Fingerprint {
		t.Errorf("the approval %s for slip %s, want the prepared %s", a.Record.Fingerprint, a.Slip, approved.Fingerprint)
	}
	if err := slip.VerifyIssued(s, a.Record); err != nil {
		t.Errorf("the approval is not the slip issuer's: %v", err)
	}
	stub, err := record.Parse(line["stub"], "stub")
	if err != nil {
		t.Fatal(err)
	}
	if stub.Content["approval"] != a.Record.Fingerprint {
		t.Errorf("the stub names approval %v, its line holds %s", stub.Content["approval"], a.Record.Fingerprint)
	}
	req, err := slip.ReadRequest(stub.Content)
	if err != nil {
		t.Fatal(err)
	}
	when, ok := canon.ParseTime(stub.Content["when"].(string))
	if !ok {
		t.Fatalf("the stub's when: %v", stub.Content["when"])
	}
	if _, err := consent.CheckApproval(line["approval"], s, consent.Proposal{Slip: s.Fingerprint, Request: req}, when, nil); err != nil {
		t.Errorf("the approval does not check against its stub: %v", err)
	}
	at, err1 := slip.RequestText(a.Record.Content)
	st, err2 := slip.RequestText(stub.Content)
	if err1 != nil || err2 != nil || string(at) != string(st) {
		t.Errorf("the approval asks for %s, the stub did %s (%v %v)", at, st, err1, err2)
	}
}

// registered is the passkey the page registered (public values only).
func registered(t *testing.T, f *folder) page.Registered {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.env.Dir, page.PasskeyFile))
	if err != nil {
		t.Fatal(err)
	}
	var reg page.Registered
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	if key, err := reg.JWK(); err != nil || key.Thumbprint != reg.Thumbprint {
		t.Fatalf("the registered key: %+v %v", key, err)
	}
	return reg
}

// readSlip is the slip the page saved, checked with the page's passkey as
// the trusted issuer.
func readSlip(t *testing.T, f *folder, thumbprint string) *slip.Slip {
	t.Helper()
	data, err := os.ReadFile(f.env.SlipPath)
	if err != nil {
		t.Fatalf("the page saved no slip: %v", err)
	}
	v, err := canon.Parse(bytes.TrimSpace(data)) // the file ends with a line feed
	if err != nil {
		t.Fatal(err)
	}
	s, res := slip.Check(v, slip.Options{IssuerKeys: []string{thumbprint}})
	if !res.Sound() {
		t.Fatalf("the page's slip does not check: %+v", res)
	}
	return s
}

// refusedWith confirms a denial with the code and returns the denial's
// fingerprint.
func refusedWith(t *testing.T, res *mcp.CallToolResult, code string) string {
	t.Helper()
	codes, _ := res.Meta[wire.MetaCodes].([]any)
	d, _ := res.Meta[wire.MetaDenial].(string)
	if !res.IsError || !slices.Contains(codes, any(code)) || !canon.IsFingerprint(d) {
		t.Fatalf("want a denial with code %s, got isError %v meta %v", code, res.IsError, res.Meta)
	}
	return d
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

// bookLines are the book's lines as canonical values.
func bookLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		v, err := canon.Parse([]byte(l))
		if err != nil {
			t.Fatalf("a book line: %v", err)
		}
		out = append(out, v.(map[string]any))
	}
	return out
}

// countKeys counts the book lines whose only member is name.
func countKeys(t *testing.T, path, name string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(l), &m) == nil && len(m) == 1 && m[name] != nil {
			n++
		}
	}
	return n
}

func sortedKeys(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// queueFiles counts the request, prepared and signed files in the queue.
func queueFiles(t *testing.T, queue string) int {
	t.Helper()
	n := 0
	for _, pattern := range []string{"*.json", "*" + page.PreparedSuffix, "*" + page.SignedSuffix} {
		m, err := filepath.Glob(filepath.Join(queue, pattern))
		if err != nil {
			t.Fatal(err)
		}
		n += len(m)
	}
	return n
}

// closeSlipForm folds the slip form away again, as the person would once
// the slip is signed (for the pictures).
func closeSlipForm(t *testing.T, ctx context.Context) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	open, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`(() => { const d = document.getElementById("slip-form-box"); d.open = false; return d.open; })()`))
	if err != nil || open {
		t.Fatalf("folding the slip form: %v (open %v)", err, open)
	}
}

// forgeCancellation writes beside the slip a cancellation of it signed by a
// passkey that is not the person's (the development passkey, on the same
// page origin), as the agent in the same pod could.
func forgeCancellation(t *testing.T, f *folder, s *slip.Slip, origin string) {
	t.Helper()
	dev, err := passkey.NewDevPasskey(origin, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	prep, err := consent.PrepareCancellation(s.Fingerprint, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, err := dev.Assert(prep.Challenge)
	if err != nil {
		t.Fatal(err)
	}
	v, err := slip.Assemble(prep, a)
	if err != nil {
		t.Fatal(err)
	}
	path := page.CancellationPath(f.env.SlipPath)
	if err := os.WriteFile(path+".tmp", canon.MustMarshal(v), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}
