//go:build integration

package stamp

import (
	"context"
	"crypto/sha256"
	"os"
	"testing"
	"time"
)

// realServices are the two real time-stamp services of the test set-up:
// Sigstore's timestamp-server (ECDSA) and OpenSSL's ts (RSA), each with
// its chain.
func realServices(t *testing.T) map[string]Service {
	t.Helper()
	out := map[string]Service{}
	for name, env := range map[string]string{"sigstore": "MCP_EXECUTOR_TEST_TSA", "openssl": "MCP_EXECUTOR_TEST_OPENSSL_TSA"} {
		url, chainPath := os.Getenv(env+"_URL"), os.Getenv(env+"_CHAIN")
		if url == "" || chainPath == "" {
			t.Fatalf("%s_URL and %s_CHAIN are not set: start the time-stamp services with: eval \"$(scripts/testenv/servers.sh start tsa openssl-tsa)\"", env, env)
		}
		pemText, err := os.ReadFile(chainPath)
		if err != nil {
			t.Fatalf("reading %s: %v", chainPath, err)
		}
		chain, fp, err := ParseChain(pemText)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = Service{URL: url, Trusted: []string{fp}, Chain: chain}
	}
	return out
}

// A stamp from each real service, checked with this package's own check
// (as the format's checker reads it) and held to the service's chain.
func TestRealServices(t *testing.T) {
	services := realServices(t)
	c := &Client{Timeout: 10 * time.Second}
	stamped := sha256.Sum256([]byte("a seal's content"))
	for name, s := range services {
		t.Run(name, func(t *testing.T) {
			before := time.Now().Add(-2 * time.Second)
			got, err := c.Ask(context.Background(), s, stamped[:])
			if err != nil {
				t.Fatal(err)
			}
			if got.Result.State != StateValid || got.Result.Authority != s.Trusted[0] {
				t.Fatalf("%+v", got.Result)
			}
			if at := got.Result.At(); at.Before(before) || at.After(time.Now().Add(2*time.Second)) {
				t.Fatalf("stamped at %v, asked at %v", at, before)
			}
			// Read again from the token alone, as a checker of the book does.
			res, err := Check(got.Token, stamped[:], Options{Trusted: s.Trusted})
			if err != nil || res != got.Result {
				t.Fatalf("checked again: %+v %v", res, err)
			}
			other := sha256.Sum256([]byte("something else"))
			if _, err := Check(got.Token, other[:], Options{Trusted: s.Trusted}); err == nil {
				t.Fatal("the token checks for another fingerprint")
			}
			// Another service's fingerprint: the token is sound but not trusted.
			res, err = Check(got.Token, stamped[:], Options{Trusted: []string{"another"}})
			if err != nil || res.State != StateUntrusted {
				t.Fatalf("untrusted: %+v %v", res, err)
			}
			// The service held to a chain it does not belong to.
			for otherName, o := range services {
				if otherName == name {
					continue
				}
				wrong := s
				wrong.Chain = o.Chain
				wrong.Trusted = nil
				if _, err := c.Ask(context.Background(), wrong, stamped[:]); err == nil {
					t.Fatalf("a token from %s held to %s's chain was taken", name, otherName)
				}
			}
		})
	}
	// Both at once, as a seal asks them.
	got, errs := c.AskAll(context.Background(), []Service{services["sigstore"], services["openssl"]}, stamped[:])
	if len(got) != 2 || len(errs) != 0 {
		t.Fatalf("AskAll: %d stamps, errors %v", len(got), errs)
	}
}
