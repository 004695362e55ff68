// Package chromiumtest starts the real browser the page's tests drive:
// Debian's headless Chromium through chromedp, with a CDP WebAuthn virtual
// authenticator standing in for the person's passkey. It is for tests
// only.
package chromiumtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's chromium (scripts/test.sh installs it).
const ChromiumPath = "/usr/bin/chromium"

// Browser starts headless Chromium with a fresh profile and a virtual
// passkey (CTAP2, internal, with user verification that succeeds) on its
// tab, and returns the tab's context; the browser ends with the test.
// "localhost" is mapped to 127.0.0.1, where the page listens (it may
// resolve to ::1 first, where another program may hold the same port).
func Browser(t testing.TB) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Fatalf("the browser tests need Debian's chromium at %s (%v): run ./scripts/test.sh setup in the repository's folder, which installs it", ChromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP localhost 127.0.0.1"),
		chromedp.WindowSize(1000, 1300),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{
				Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
				Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true,
				HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
			}})
		return err
	}))
	if err != nil {
		t.Fatalf("starting chromium with a virtual passkey: %v", err)
	}
	return ctx
}

// Step runs actions within limit, failing the test with what.
func Step(t testing.TB, ctx context.Context, limit time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Text is the text content of the element sel names, read within limit.
func Text(t testing.TB, ctx context.Context, limit time.Duration, sel string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}
