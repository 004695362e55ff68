package page

import (
	"context"
	"crypto"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/seed-6e06167c/mcp-executor/internal/chromiumtest"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// browser starts headless Chromium with a virtual passkey on its tab
// (chromiumtest.Browser).
func browser(t *testing.T) context.Context { return chromiumtest.Browser(t) }

// step runs actions with a deadline.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	chromiumtest.Step(t, ctx, 30*time.Second, what, actions...)
}

// text is the text content of the element sel names.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return chromiumtest.Text(t, ctx, 30*time.Second, sel)
}

// screenshot saves the whole page as NAME.png in $PAGE_SCREENSHOTS, else
// in a temporary folder. The README's pictures come from the test with the
// real executor (sidecar/page/e2e, PAGE_SCREENSHOTS=$PWD/docs/images).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PAGE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPageInRealBrowser is the person's whole path through the page in
// headless Chromium with a virtual passkey: register it, sign a slip that
// requires approval for supplies.order, approve one held call and decline
// another, cancel the slip. The calls are held by a Hub in the test process
// with the queue and page channels, as the engine holds them; the same path
// with the page and the executor as real processes is sidecar/page/e2e.
func TestPageInRealBrowser(t *testing.T) {
	f := newFixture(t)
	ctx := browser(t)

	// 1. Register the passkey with the registration code (a wrong code
	// first: the page says so and registers nothing); the page shows its
	// thumbprint.
	step(t, ctx, "opening the page", chromedp.Navigate(f.url+"/"), chromedp.WaitVisible(chromedp.ID("register")))
	step(t, ctx, "a wrong code", chromedp.SetValue(chromedp.ID("register-code"), wrongCode(t, f.code)), chromedp.Click(chromedp.ID("register")))
	waitText(t, ctx, "#error", "the registration code is wrong")
	if _, err := os.Stat(filepath.Join(f.dir, PasskeyFile)); err == nil {
		t.Fatal("a wrong code registered a passkey")
	}
	step(t, ctx, "registering", chromedp.SetValue(chromedp.ID("register-code"), strings.ToLower(f.code)), chromedp.Click(chromedp.ID("register")),
		chromedp.WaitVisible(chromedp.ID("passkey-info")))
	reg, err := loadRegistered(filepath.Join(f.dir, PasskeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#thumbprint"); got != reg.Thumbprint || reg.Origin != f.origin || reg.RPID != "localhost" {
		t.Fatalf("the page shows thumbprint %q; registered %+v", got, reg)
	}
	if key, err := reg.JWK(); err != nil || key.Alg != "ES256" {
		t.Fatalf("the registered key: %v %v", key, err)
	}
	// go-jose, as the independent check, gives the same RFC 7638 thumbprint.
	raw, _ := json.Marshal(reg.Key)
	var jk jose.JSONWebKey
	if err := jk.UnmarshalJSON(raw); err != nil {
		t.Fatalf("go-jose reads the registered key: %v", err)
	}
	if tp, err := jk.Thumbprint(crypto.SHA256); err != nil || canon.B64(tp) != reg.Thumbprint {
		t.Fatalf("go-jose's thumbprint %s, ours %s (%v)", canon.B64(tp), reg.Thumbprint, err)
	}
	f.writeSettings([]string{reg.Thumbprint}) // the person puts it in agent.issuerKeys
	screenshot(t, ctx, "page-passkey")

	// 2. Review and sign a slip requiring approval for supplies.order.
	c := f.choices()
	step(t, ctx, "filling in the slip",
		chromedp.Click(chromedp.CSS("#slip-form-box summary")),
		chromedp.WaitVisible(chromedp.ID("permission")),
		chromedp.SetValue(chromedp.ID("permission"), string(c.Permission)),
		chromedp.SetValue(chromedp.ID("issuer-name"), c.IssuerName),
		chromedp.SetValue(chromedp.ID("agent-name"), c.AgentName),
		chromedp.SetValue(chromedp.ID("actions"), strings.Join(c.Actions, ", ")),
		chromedp.SetValue(chromedp.ID("approval-actions"), "supplies.order"),
		chromedp.SetValue(chromedp.ID("limits"), strings.Join(c.Limits, "\n")),
		chromedp.SetValue(chromedp.ID("valid-from"), c.ValidFrom),
		chromedp.SetValue(chromedp.ID("valid-until"), c.ValidUntil),
		chromedp.SetValue(chromedp.ID("purpose"), c.Purpose),
		chromedp.Click(chromedp.ID("review")),
		chromedp.WaitVisible(chromedp.ID("slip-review-box")))
	if review := text(t, ctx, "#slip-review"); !strings.Contains(review, `"need": "approval"`) || !strings.Contains(review, `"origin": "`+f.origin+`"`) {
		t.Fatalf("the review does not show the approval condition: %s", review)
	}
	screenshot(t, ctx, "page-slip-review")
	step(t, ctx, "signing the slip", chromedp.Click(chromedp.ID("sign-slip")), chromedp.WaitVisible(chromedp.ID("slip-info")))
	s := f.currentSlip()
	if s == nil {
		t.Fatal("no sound slip was saved at the settings' slip path")
	}
	if got := text(t, ctx, "#slip-fingerprint"); got != s.Fingerprint {
		t.Errorf("the page shows slip %q, saved %s", got, s.Fingerprint)
	}
	if len(s.Requires) != 2 || s.Requires[1].Need != "approval" || s.Requires[1].Action != "supplies.order" || s.Issuer.Key.Thumbprint != reg.Thumbprint {
		t.Fatalf("the slip: requires %+v, issuer %s", s.Requires, s.Issuer.Key.Thumbprint)
	}

	// 3. Two calls held for the passkey; the page lists both, a secret
	// redacted.
	hctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h1, prep1 := f.hold(hctx, "call-1", 150, `{"item":"paper","quantity":3}`)
	id1 := waitingID(t, f.client())
	h2, _ := f.hold(hctx, "call-2", 40, `{"item":"pens","apiKey":"sk-live-123456789abcdef"}`)
	var id2 string
	f.waitFor(func() bool {
		m, _ := filepath.Glob(filepath.Join(f.queue, "*"+PreparedSuffix))
		for _, name := range m {
			if id := strings.TrimSuffix(filepath.Base(name), PreparedSuffix); id != id1 {
				id2 = id
			}
		}
		return id2 != ""
	}, "the second prepared file")
	li := func(id string) string { return `#waiting li[data-request="` + id + `"]` }
	step(t, ctx, "seeing both calls", chromedp.WaitVisible(chromedp.CSS(li(id1))), chromedp.WaitVisible(chromedp.CSS(li(id2))))
	if shown := text(t, ctx, "#waiting"); strings.Contains(shown, "sk-live") || !strings.Contains(shown, "150 GBP") || !strings.Contains(shown, prep1.Fingerprint) {
		t.Fatalf("the waiting list shows: %s", shown)
	}
	screenshot(t, ctx, "page-waiting")

	// 4. Approve the first: it runs once with the approval on its line.
	step(t, ctx, "approving", chromedp.Click(chromedp.CSS(li(id1)+" button.approve")))
	r1 := <-h1.result
	if err := <-h1.err; err != nil || r1.Outcome != approval.Approved || r1.Answer.Channel != ChannelPage || r1.Answer.Record == nil {
		t.Fatalf("the approved call: %v %+v %v", r1.Outcome, r1.Answer, err)
	}
	p1, _ := consent.ProposalOf(prep1)
	if _, err := consent.CheckApproval(r1.Answer.Record.Value(), s, p1, time.Now(), nil); err != nil {
		t.Fatalf("the browser's approval does not check: %v", err)
	}
	if a, err := slip.ReadApproval(r1.Answer.Record.Value()); err != nil || a.Record.Fingerprint != prep1.Fingerprint {
		t.Fatalf("the browser's approval as a record: %v", err)
	}
	slipLine, _ := book.Line{Slip: s.Record}.Bytes()
	bp := book.Proposal{Slip: s.Fingerprint, Action: p1.Action, Amount: &record.Amount{Unit: "GBP", Value: 150}, With: p1.With, Approval: r1.Answer.Record}
	for _, d := range p1.Details {
		bp.Details = append(bp.Details, record.Detail{Name: d.Name, SHA256: d.SHA256})
	}
	opts := book.Options{IssuerKeys: []string{reg.Thumbprint}}
	if dec := book.CheckBefore(append(slipLine, '\n'), bp, opts); !dec.Allowed {
		t.Fatalf("the check before acting refused the browser's approval: %+v", dec)
	}

	// 5. Decline the second: a denial, never sent.
	step(t, ctx, "declining", chromedp.WaitVisible(chromedp.CSS(li(id2)+" button.decline")), chromedp.Click(chromedp.CSS(li(id2)+" button.decline")))
	r2 := <-h2.result
	if err := <-h2.err; err != nil || r2.Outcome != approval.Declined || r2.Answer.Channel != ChannelPage || r2.Outcome.Code() != "approval-declined" {
		t.Fatalf("the declined call: %v %+v %v", r2.Outcome, r2.Answer, err)
	}
	step(t, ctx, "the list empties", chromedp.WaitVisible(chromedp.ID("waiting-none")))

	// 6. Cancel the slip: the cancellation file beside it checks, and the
	// check before acting refuses the next call.
	step(t, ctx, "cancelling", chromedp.Click(chromedp.ID("cancel-slip")), chromedp.WaitVisible(chromedp.ID("slip-cancelled")))
	cancelled, err := ReadCancellation(CancellationPath(f.slip), s)
	if err != nil {
		t.Fatalf("the cancellation: %v", err)
	}
	screenshot(t, ctx, "page-cancelled")
	cLine, _ := book.Line{Cancellation: cancelled.Record}.Bytes()
	bookText := append(append(append(slipLine, '\n'), cLine...), '\n')
	if dec := book.CheckBefore(bookText, book.Proposal{Slip: s.Fingerprint, Action: "supplies.list", With: "executor"}, opts); dec.Allowed || len(dec.Breaches) == 0 || dec.Breaches[0].Code != "after-cancellation" {
		t.Fatalf("a call after the cancellation: %+v", dec)
	}

	// 7. The book the engine is to write (docs/design/page.md): the
	// approved call's stub with its approval and countersignature on one
	// line, then the cancellation, is intact and within its slip under our
	// checker; with the outcome document added to the stub's details it
	// would not be (the approval names the details known before the call).
	res := book.CheckBook(f.approvedBook(s, r1.Answer.Record, cancelled.Record), opts)
	if !res.Summary.Intact || !res.Summary.WithinSlips || len(res.Entries) != 3 || res.Entries[1].Kind != book.KindStub {
		t.Fatalf("the approved book: %+v", res)
	}
	res = book.CheckBook(f.approvedBook(s, r1.Answer.Record, nil, record.Detail{Name: "provared.tool-result", SHA256: prep1.Fingerprint}), opts)
	if res.Summary.WithinSlips && res.Summary.Intact {
		t.Fatalf("a stub naming more details than its approval was taken: %+v", res.Summary)
	}
	if got := findingCodes(res); !strings.Contains(got, "approval-mismatch") {
		t.Fatalf("a stub naming more details than its approval: %s", got)
	}

	// 8. Replace the passkey: a new registration code (the page started
	// again with --new-passkey), a second passkey created in the browser,
	// and the first one confirming it.
	code2, _, err := f.srv.IssueCode(0)
	if err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "the replacement form", chromedp.WaitVisible(chromedp.ID("register-form")))
	if got := text(t, ctx, "#register"); got != "Replace the passkey" {
		t.Fatalf("the button says %q", got)
	}
	step(t, ctx, "replacing", chromedp.SetValue(chromedp.ID("register-code"), code2), chromedp.Click(chromedp.ID("register")))
	waitText(t, ctx, "#status", "Passkey replaced")
	now, err := loadRegistered(filepath.Join(f.dir, PasskeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if now.Thumbprint == reg.Thumbprint || now.CredentialID == reg.CredentialID || !strings.Contains(text(t, ctx, "#status"), now.Thumbprint) {
		t.Fatalf("after the replacement the page holds %+v (was %s)", now, reg.Thumbprint)
	}
}

// TestPageOffersNoAnswerForAnotherOrigin: with a slip in force that names
// another origin than the page's, Chromium shows why nothing can be
// answered here, naming both origins, and no approve, decline or cancel
// button.
func TestPageOffersNoAnswerForAnotherOrigin(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	f.slipForOrigin(pk, otherOrigin)
	hctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.hold(hctx, "call-1", 150, `{"item":"paper"}`)
	id := waitingID(t, c)
	ctx := browser(t)
	li := `#waiting li[data-request="` + id + `"]`
	step(t, ctx, "opening the page", chromedp.Navigate(f.url+"/"), chromedp.WaitVisible(chromedp.CSS(li)))
	want := "This page is " + f.origin + " (rpId localhost), and the slip in force names " + otherOrigin
	waitText(t, ctx, "#answer-problem", want)
	if shown := text(t, ctx, li); !strings.Contains(shown, want) {
		t.Errorf("the waiting call shows %q", shown)
	}
	if got := text(t, ctx, "#slip-origin"); got != otherOrigin {
		t.Errorf("the slip's origin is shown as %q", got)
	}
	sctx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	buttons, err := chromedp.Run(sctx, chromedp.Evaluate[int](`document.querySelectorAll('#waiting button').length + (document.getElementById('cancel-slip').hidden ? 0 : 1)`))
	if err != nil || buttons != 0 {
		t.Fatalf("the page offers %d buttons that would fail (%v)", buttons, err)
	}
	screenshot(t, ctx, "page-other-origin")
}

// waitText waits until the text of the element sel names holds want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := text(t, ctx, sel)
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s shows %q, not %q", sel, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func findingCodes(res book.Result) string {
	var out []string
	for _, p := range res.Problems {
		out = append(out, p.Code)
	}
	for _, e := range res.Entries {
		for _, p := range append(append([]book.Finding(nil), e.Problems...), e.Breaches...) {
			out = append(out, p.Code)
		}
	}
	return strings.Join(out, ",")
}
