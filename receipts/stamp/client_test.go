package stamp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/tsatest"
	"github.com/seed-6e06167c/mcp-executor/receipts/der"
)

// A service that answers as its test needs: the made-up service of
// tsatest stands behind it (a real one cannot be made to misbehave). The
// real services are in integration_test.go.
func fakeService(t *testing.T, answer func(req []byte, w http.ResponseWriter)) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/timestamp-query" || r.Method != http.MethodPost {
			http.Error(w, "not a time-stamp query", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		answer(body, w)
	})
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// granted wraps a token in a granted TimeStampResp.
func granted(token []byte) []byte {
	return seq(seq(tlv(der.Integer, []byte{0})), token)
}

// requestParts reads the nonce and imprint of a request this package built.
func requestParts(t *testing.T, req []byte) (stamped, nonce []byte) {
	r := &reader{b: req}
	outer := r.read(0, len(req))
	parts := r.children(outer, 5)
	imprint := r.children(parts[1], 2)
	return r.content(imprint[1]), r.content(parts[2])
}

func TestClientFaults(t *testing.T) {
	tsa, err := tsatest.New(bytes.Repeat([]byte{0x0d}, 32))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	stamped := sha256.Sum256([]byte("seal"))
	good := func(req []byte, w http.ResponseWriter) {
		s, n := requestParts(t, req)
		_, _ = w.Write(granted(tsa.Token(s, now, tsatest.Options{Nonce: n})))
	}
	c := &Client{Timeout: 500 * time.Millisecond}
	svc := func(url string) Service { return Service{URL: url, Trusted: []string{tsa.Fingerprint}} }

	got, err := c.Ask(context.Background(), svc(fakeService(t, good)), stamped[:])
	if err != nil || got.Result.State != StateValid || got.Result.Authority != tsa.Fingerprint {
		t.Fatalf("a good service: %+v %v", got, err)
	}

	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	for name, tc := range map[string]struct {
		answer func([]byte, http.ResponseWriter)
		want   string
	}{
		"refuses": {func(_ []byte, w http.ResponseWriter) {
			// status 2 (rejection), failInfo badAlg
			_, _ = w.Write(seq(seq(tlv(der.Integer, []byte{2}), tlv(der.BitString, []byte{7, 0x80}))))
		}, "refused the request (status 2, [badAlg])"},
		"answers HTTP 500": {func(_ []byte, w http.ResponseWriter) { http.Error(w, "no", 500) }, "HTTP 500"},
		"hangs":            {func([]byte, http.ResponseWriter) { hangUp(hang) }, "context deadline exceeded"},
		"answers garbage":  {func(_ []byte, w http.ResponseWriter) { _, _ = w.Write([]byte("<html>hello</html>")) }, "stamp-bad-data"},
		"answers for another nonce": {func(req []byte, w http.ResponseWriter) {
			s, _ := requestParts(t, req)
			_, _ = w.Write(granted(tsa.Token(s, now, tsatest.Options{Nonce: []byte{1}})))
		}, "nonce is not the request's"},
		"answers for another fingerprint": {func(req []byte, w http.ResponseWriter) {
			_, n := requestParts(t, req)
			other := sha256.Sum256([]byte("other"))
			_, _ = w.Write(granted(tsa.Token(other[:], now, tsatest.Options{Nonce: n})))
		}, "stamps another fingerprint"},
		"answers with bytes after": {func(req []byte, w http.ResponseWriter) {
			s, n := requestParts(t, req)
			_, _ = w.Write(append(granted(tsa.Token(s, now, tsatest.Options{Nonce: n})), 0))
		}, "bytes left over"},
		"grants with no token": {func(_ []byte, w http.ResponseWriter) { _, _ = w.Write(seq(seq(tlv(der.Integer, []byte{0})))) }, "holds no time-stamp"},
		"answers too much":     {func(_ []byte, w http.ResponseWriter) { _, _ = w.Write(make([]byte, MaxResponseBytes+10)) }, "longer than"},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := c.Ask(context.Background(), svc(fakeService(t, tc.answer)), stamped[:])
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
			if time.Since(start) > 2*time.Second {
				t.Fatalf("took %v past a timeout of 500 ms", time.Since(start))
			}
		})
	}

	// A token from another service than the one it is known by.
	other, _ := tsatest.New(bytes.Repeat([]byte{0x0e}, 32))
	_, err = c.Ask(context.Background(), Service{URL: fakeService(t, good), Trusted: []string{other.Fingerprint}}, stamped[:])
	if err == nil || !strings.Contains(err.Error(), "not one the service is known by") {
		t.Fatalf("another service's token: %v", err)
	}

	// AskAll gives what it got, and an error for each that gave nothing, in
	// no more time than one timeout.
	start := time.Now()
	stamps, errs := c.AskAll(context.Background(), []Service{svc(fakeService(t, good)), svc(fakeService(t, func([]byte, http.ResponseWriter) { hangUp(hang) }))}, stamped[:])
	if len(stamps) != 1 || len(errs) != 1 || time.Since(start) > 2*time.Second {
		t.Fatalf("AskAll: %d stamps, %v, in %v", len(stamps), errs, time.Since(start))
	}
	if _, err := NewRequest(stamped[:31]); err == nil {
		t.Fatal("a request over 31 bytes")
	}
}

// hangUp stands for a service that does not answer: until the test ends,
// or two seconds at most.
func hangUp(done chan struct{}) {
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
}

// FuzzReadResponse: a service's answer of any bytes is refused or gives a
// token that checks; nothing panics.
func FuzzReadResponse(f *testing.F) {
	tsa, _ := tsatest.New(bytes.Repeat([]byte{0x0d}, 32))
	stamped := sha256.Sum256([]byte("seal"))
	req, _ := NewRequestWithNonce(stamped[:], []byte{1, 2, 3})
	f.Add(granted(tsa.Token(stamped[:], time.Unix(1800000000, 0), tsatest.Options{Nonce: req.Nonce})))
	f.Add(seq(seq(tlv(der.Integer, []byte{2}))))
	f.Fuzz(func(t *testing.T, resp []byte) {
		token, res, err := ReadResponse(resp, req, Options{Trusted: []string{tsa.Fingerprint}})
		if err != nil {
			return
		}
		if again, err := Check(token, stamped[:], Options{Trusted: []string{tsa.Fingerprint}}); err != nil || again != res {
			t.Fatalf("a token ReadResponse took does not check the same: %v", err)
		}
	})
}
