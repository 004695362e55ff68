package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

func TestPageUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"page"}, "--config FILE is required"},
		{[]string{"page", "--config", "x.json", "--listen", "0.0.0.0:8443"}, "is not loopback; give --origin"},
		{[]string{"page", "--config", "x.json", "--listen", "nonsense"}, "--listen"},
		{[]string{"page", "--config", "x.json", "--code-ttl", "0s"}, "--code-ttl 0s"},
		{[]string{"page", "--config", "x.json", "--code-ttl", "25h"}, "at most 24h"},
	} {
		code, _, errOut := runBinary(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
}

// TestPageServesTheEmbeddedPage starts the real binary on a loopback port
// and reads the page and its script from it, then stops it with SIGTERM.
func TestPageServesTheEmbeddedPage(t *testing.T) {
	config, _ := approveFolder(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary(t), "page", "--config", config, "--listen", addr)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	origin, _ := page.OriginFor(addr)
	// localhost may resolve to ::1 first, where another program may hold
	// the same port number: dial the address the page listens on.
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}}}
	var resp *http.Response
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err = client.Get(origin + "/")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not answer: %v; stderr %s", err, errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != page.CSP || !strings.Contains(string(body), `<script src="/app.js" defer>`) {
		t.Fatalf("the page: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	js, err := client.Get(origin + "/app.js")
	if err != nil {
		t.Fatal(err)
	}
	js.Body.Close()
	if js.StatusCode != 200 || !strings.Contains(js.Header.Get("Content-Type"), "javascript") {
		t.Errorf("app.js: %d %s", js.StatusCode, js.Header.Get("Content-Type"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("page after SIGTERM: %v; stderr %s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "open "+origin) {
		t.Errorf("stderr does not say where to open the page: %s", errOut.String())
	}
}

// TestPageOnAFreePort: with --listen 127.0.0.1:0 the page takes a free
// port and says its true origin (http://localhost:PORT), and answers there.
func TestPageOnAFreePort(t *testing.T) {
	config, _ := approveFolder(t)
	cmd := exec.Command(binary(t), "page", "--config", config, "--listen", "127.0.0.1:0")
	errOut := &syncbuf.Buffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	said := regexp.MustCompile(`open (http://localhost:([0-9]+)) in the browser`)
	var m []string
	deadline := time.Now().Add(20 * time.Second)
	for m = said.FindStringSubmatch(errOut.String()); m == nil; m = said.FindStringSubmatch(errOut.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the page did not say its origin; stderr %s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m[2] == "0" {
		t.Fatalf("the origin names port 0: %s", m[1])
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", "127.0.0.1:"+m[2])
	}}}
	resp, err := client.Get(m[1] + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	var st page.State
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || st.Origin != m[1] {
		t.Fatalf("the state at %s: %d %+v %v", m[1], resp.StatusCode, st, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("page after SIGTERM: %v; stderr %s", err, errOut.String())
	}
}

// TestPageRefusesAPasskeyFileItCannotRead: a passkey file that holds no
// passkey stops the page at start (it would otherwise be taken for no
// passkey, and a code printed for a registration in its place), and
// --passkey names the file.
func TestPageRefusesAPasskeyFileItCannotRead(t *testing.T) {
	config, _ := approveFolder(t)
	bad := filepath.Join(t.TempDir(), "page-passkey.json")
	if err := os.WriteFile(bad, []byte(`{"credentialId":"AA","alg":"ES256","key":{},"thumbprint":"x","origin":"o","rpId":"r","registeredAt":"t"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runBinary(t, "", "page", "--config", config, "--listen", "127.0.0.1:0", "--passkey", bad)
	if code != ExitFinding || !strings.Contains(errOut, "the passkey file") || strings.Contains(errOut, "registration code") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
