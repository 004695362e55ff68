//go:build integration

package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
	"github.com/seed-6e06167c/mcp-executor/receipts/stamp"
)

// A book sealed twice with stamps from the two real time-stamp services
// (Sigstore's timestamp-server and OpenSSL's ts): verify says how far each
// trusted service shows the book existed, and not under a service it was
// not told to trust.
func TestVerifyRealStamps(t *testing.T) {
	type svc struct{ url, chain string }
	found := map[string]svc{}
	for name, env := range map[string]string{"sigstore": "MCP_EXECUTOR_TEST_TSA", "openssl": "MCP_EXECUTOR_TEST_OPENSSL_TSA"} {
		s := svc{os.Getenv(env + "_URL"), os.Getenv(env + "_CHAIN")}
		if s.url == "" || s.chain == "" {
			t.Fatalf("%s_URL and %s_CHAIN are not set: start the time-stamp services with: eval \"$(scripts/testenv/servers.sh start tsa openssl-tsa)\"", env, env)
		}
		found[name] = s
	}
	var services []stamp.Service
	fingerprints := map[string]string{}
	for _, name := range []string{"sigstore", "openssl"} {
		pemText, err := os.ReadFile(found[name].chain)
		if err != nil {
			t.Fatal(err)
		}
		chain, fp, err := stamp.ParseChain(pemText)
		if err != nil {
			t.Fatal(err)
		}
		fingerprints[name] = fp
		services = append(services, stamp.Service{URL: found[name].url, Trusted: []string{fp}, Chain: chain})
	}

	e := folder(t, func(o *devsetup.Options) { o.SealKeys = true })
	b, err := book.OpenBook(e.BookPath, book.Options{IssuerKeys: []string{e.Thumbprint}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	client := &stamp.Client{Timeout: 10 * time.Second}
	sealNow := func() {
		t.Helper()
		err := b.Seal(context.Background(), func(ctx context.Context, at book.SealPoint) ([]byte, error) {
			p, err := seal.Prepare(seal.Fields{Name: "test executor", Keys: e.Sealer.Keys(), Size: at.Size, Root: at.Root, Previous: at.Previous, When: time.Now()})
			if err != nil {
				return nil, err
			}
			got := make(chan []stamp.Stamp, 1)
			go func() {
				s, errs := client.AskAll(ctx, services, p.Stamped())
				for _, err := range errs {
					t.Errorf("a real service gave no stamp: %v", err)
				}
				got <- s
			}()
			sealed, err := p.Sign(ctx, e.Sealer)
			if err != nil {
				return nil, err
			}
			var tokens [][]byte
			for _, s := range <-got {
				tokens = append(tokens, s.Token)
			}
			return sealed.Line(tokens)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Append(book.Line{Slip: e.Slip.Record}); err != nil {
		t.Fatal(err)
	}
	s0 := stub(t, e, 0, "", "call-1")
	if err := b.Append(s0); err != nil {
		t.Fatal(err)
	}
	sealNow() // line 3: covers 2 entries
	s1 := stub(t, e, 1, s0.Stub.Fingerprint, "call-2")
	if err := b.Append(s1); err != nil {
		t.Fatal(err)
	}
	sealNow() // line 5: covers 4

	sealer := e.Sealer.Keys().Fingerprint()
	code, out, errOut := run(t, "verify", e.BookPath, "--trust", e.Thumbprint, "--sealer", sealer,
		"--stamp-service", found["sigstore"].chain, "--stamp-service", fingerprints["openssl"])
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for name, fp := range fingerprints {
		if !strings.Contains(out, "sealed: the first 4 entries existed by ") || !strings.Contains(out, "(service "+fp+", the seal at line 5)") {
			t.Errorf("%s: the report does not say the first 4 entries existed by its stamp:\n%s", name, out)
		}
	}
	// Only Sigstore trusted: OpenSSL's stamps are shown as not counted.
	code, out, _ = run(t, "verify", e.BookPath, "--trust", e.Thumbprint, "--stamp-service", fingerprints["sigstore"])
	if code != ExitOK || !strings.Contains(out, "not counted: the time-stamp of "+fingerprints["openssl"]+" on the seal at line 3") ||
		strings.Contains(out, "(service "+fingerprints["openssl"]) {
		t.Fatalf("only one service trusted: exit %d\n%s", code, out)
	}
}
