package socket

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"unix:/run/x.sock", "/run/x.sock", true},
		{"unix:rel.sock", "rel.sock", true},
		{"unix:", "", false},
		{"/run/x.sock", "", false},
		{"tcp:127.0.0.1:80", "", false},
	} {
		got, err := ParseAddress(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAddress(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestListenModeAndPeer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != SocketMode {
		t.Fatalf("socket mode %v, want %v", fi.Mode().Perm(), SocketMode)
	}
	// A second Listen replaces the stale socket file.
	l.Close()
	l, err = Listen(path)
	if err != nil {
		t.Fatalf("relisten over a stale socket: %v", err)
	}
	defer l.Close()

	got := make(chan PeerCred, 1)
	go func() {
		c, err := l.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		p, err := Peer(c)
		if err == nil {
			got <- p
		}
	}()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go Bridge(ctx, "unix:"+path, strings.NewReader(""), &out)
	select {
	case p := <-got:
		if p.UID != uint32(os.Getuid()) || p.PID != int32(os.Getpid()) {
			t.Fatalf("peer %+v, want uid %d pid %d", p, os.Getuid(), os.Getpid())
		}
	case <-ctx.Done():
		t.Fatal("no peer credentials read")
	}
}

func TestListenRefusesOtherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-a-socket")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Fatal("the regular file was changed")
	}
}

// TestBridgeEcho runs the bridge against a line-echo server on a real socket: every line sent on
// stdin comes back on stdout, and the bridge ends when stdin ends and the server closes.
func TestBridgeEcho(t *testing.T) {
	path := filepath.Join(t.TempDir(), "echo.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if _, err := c.Write(bytes.ToUpper(line)); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	in := strings.NewReader("{\"a\":1}\nsecond line\n")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Bridge(ctx, "unix:"+path, in, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "{\"A\":1}\nSECOND LINE\n"; got != want {
		t.Fatalf("bridge output %q, want %q", got, want)
	}
}

func TestBridgeNoServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.sock")
	err := Bridge(context.Background(), "unix:"+path, strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "mcp-executor serve") {
		t.Fatalf("bridge to a missing socket: %v", err)
	}
}

func TestHealthEndpoints(t *testing.T) {
	h := NewHealth("keys", "book", "copy")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, err := ServeHealth(ctx, "127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, `"keys":"not yet done"`) {
		t.Fatalf("/readyz before ready = %d %s", code, body)
	}
	h.Set("keys", nil)
	h.Set("book", nil)
	h.Set("copy", nil)
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"ready":true`) {
		t.Fatalf("/readyz when ready = %d %s", code, body)
	}
	// The executor stopped taking calls: both endpoints fail and say why.
	h.SetDead(errors.New("the executor takes no more calls: signing failed"))
	if code, body := get("/healthz"); code != 503 || !strings.Contains(body, "signing failed") {
		t.Fatalf("/healthz after SetDead = %d %s", code, body)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "signing failed") {
		t.Fatalf("/readyz after SetDead = %d %s", code, body)
	}
}

// A client that stops reading: a write fails once the timeout has passed,
// the connection is closed, and later writes fail at once.
func TestConnWriteDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("unix", path) // never reads
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(sc, 50*time.Millisecond)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var werr error
	for i := 0; i < 10000 && werr == nil; i++ { // the socket's buffer fills, then a write times out
		_, werr = c.Write(chunk)
	}
	if !errors.Is(werr, ErrCut) {
		t.Fatalf("write to a client that reads nothing: %v, want ErrCut", werr)
	}
	if _, err := c.Write([]byte("y")); !errors.Is(err, ErrCut) {
		t.Fatalf("a write after the cut: %v", err)
	}
}

// Cut ends writes: one in progress (blocked on a client that reads nothing) fails, and so does every later one.
func TestConnCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(sc, time.Hour)
	done := make(chan error, 1)
	go func() {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if _, err := c.Write(chunk); err != nil {
				done <- err
				return
			}
		}
	}()
	c.Cut()
	if err := <-done; err == nil {
		t.Fatal("a write after Cut succeeded")
	}
	if _, err := c.Write([]byte("y")); !errors.Is(err, ErrCut) {
		t.Fatalf("a write after the cut: %v", err)
	}
}
