package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/seed-6e06167c/mcp-executor/internal/chromiumtest"
)

// browser starts headless Chromium with a virtual passkey on its tab
// (chromiumtest.Browser).
func browser(t *testing.T) context.Context { return chromiumtest.Browser(t) }

// step runs actions with a deadline.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	chromiumtest.Step(t, ctx, waitLimit, what, actions...)
}

// text is the text content of the element sel names.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return chromiumtest.Text(t, ctx, waitLimit, sel)
}

// screenshot saves the whole page as NAME.png in $PAGE_SCREENSHOTS (the
// README's pictures: PAGE_SCREENSHOTS=$PWD/docs/images), else in a
// temporary folder, and confirms it is a PNG.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PAGE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	sctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	buf, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(buf) < 8 || string(buf[1:4]) != "PNG" {
		t.Fatalf("screenshot %s is no PNG", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}
