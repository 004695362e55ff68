package toolserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// Fake secrets a tool server writes to its stderr (the AWS ones are AWS's
// documentation examples).
const (
	ghToken   = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	awsID     = "AKIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	pemBody1  = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"
	pemBody2  = "KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ"
)

// moreChildModes are the servers of these tests, run by runChild.
var moreChildModes = map[string]func() int{
	// A server that logs its arguments, secrets and all, and writes
	// escape sequences, bad UTF-8 and an overlong line to its stderr.
	"secrets": func() int {
		w := bufio.NewWriter(os.Stderr)
		fmt.Fprintf(w, "calling with token %s\n", ghToken)
		fmt.Fprintf(w, "aws %s %s\n", awsID, awsSecret)
		fmt.Fprintf(w, "-----BEGIN RSA PRIVATE KEY-----\n%s\n%s\n-----END RSA PRIVATE KEY-----\n", pemBody1, pemBody2)
		fmt.Fprint(w, "\x1b[2J\x07clear \u202etxt.exe\n")
		fmt.Fprint(w, "bad \xff\xfe utf-8\n")
		fmt.Fprintf(w, "%s %s and more\n", strings.Repeat("a", DefaultMaxLogLine-6), ghToken) // the token cut at the bound
		fmt.Fprint(w, "last line password=hunter2")                                           // no line feed
		if w.Flush() != nil {
			return 9
		}
		return 0
	},
	// A server that writes many lines to stderr and exits.
	"flood": func() int {
		w := bufio.NewWriter(os.Stderr)
		for i := range 20000 {
			fmt.Fprintf(w, "line %d with %s\n", i, ghToken)
		}
		if w.Flush() != nil {
			return 9
		}
		fmt.Println("done")
		return 0
	},
}

type record struct {
	Level, Msg, Server, Line string
	Cut, Lines               int
}

func records(t *testing.T, data []byte) []record {
	t.Helper()
	var out []record
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r record
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func testRedactor(t *testing.T) *redact.Redactor {
	t.Helper()
	r, err := redact.New(bytes.Repeat([]byte{3}, redact.SaltSize), redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A real server writes secrets to its stderr: each line reaches the log as
// a record of its own, redacted, escaped and bounded.
func TestStderrLogRedacts(t *testing.T) {
	t.Parallel()
	var buf syncbuf.Buffer
	red := testRedactor(t)
	s := spec(t, "secrets")
	s.Stderr = NewStderrLog(slog.New(slog.NewJSONHandler(&buf, nil)), StderrLogOptions{Server: "fs", Redact: red.Text})
	p := start(t, s)
	if code, _ := p.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if err := p.Stop(context.Background()); err != nil { // waits for the copy to finish
		t.Fatal(err)
	}
	raw := buf.String()
	for _, secret := range []string{ghToken, "ghp_", awsID, awsSecret, pemBody1, pemBody2, "hunter2", "\x1b", "\\u001b", "\u202e", "\xff"} {
		if strings.Contains(raw, secret) {
			t.Errorf("the log holds %q:\n%s", secret, raw)
		}
	}
	recs := records(t, []byte(raw))
	var lines []string
	for _, r := range recs {
		if r.Msg != MsgStderrLine || r.Server != "fs" || r.Level != "INFO" {
			t.Errorf("record %+v", r)
		}
		lines = append(lines, r.Line)
	}
	tok := func(kind, secret string) string {
		return "[REDACTED:" + kind + ":" + redact.Tag(red.Salt(), secret) + "]"
	}
	want := []string{
		"calling with token " + tok(redact.KindGitHub, ghToken),
		"aws " + tok(redact.KindAWSKeyID, awsID) + " " + tok(redact.KindAWSSecret, awsSecret),
		tok(redact.KindPrivateKey, "-----BEGIN RSA PRIVATE KEY-----\n"+pemBody1+"\n"+pemBody2+"\n-----END RSA PRIVATE KEY-----"),
		`\x1b[2J\x07clear \u202etxt.exe`,
		`bad \xff\xfe utf-8`,
		strings.Repeat("a", DefaultMaxLogLine-6) + " ",
		"last line password=" + tok(redact.KindPassword, "hunter2"),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(lines), len(want), raw)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("record %d:\n got  %q\n want %q", i, lines[i], want[i])
		}
	}
	if recs[2].Lines != 4 {
		t.Errorf("the key block's record says %d lines", recs[2].Lines)
	}
	if c := recs[5].Cut; c != len(ghToken)+len(" and more") {
		t.Errorf("the long line's record says %d bytes cut, want %d", c, len(ghToken)+len(" and more"))
	}
}

// blockingHandler is a log handler that waits until released: a stalled
// log (stderr of the executor not read). Nothing real stalls on demand, so
// this handler stands in for one.
type blockingHandler struct {
	slog.Handler
	release chan struct{}
}

func (h *blockingHandler) Handle(ctx context.Context, r slog.Record) error {
	<-h.release
	return h.Handler.Handle(ctx, r)
}

// A stalled log never stalls the server: its lines are dropped and
// counted, and the count is logged once the log moves again.
func TestStderrLogNeverBlocksTheServer(t *testing.T) {
	t.Parallel()
	var buf syncbuf.Buffer
	h := &blockingHandler{Handler: slog.NewJSONHandler(&buf, nil), release: make(chan struct{})}
	sl := NewStderrLog(slog.New(h), StderrLogOptions{Queue: 8})
	s := spec(t, "flood")
	s.Stderr = sl
	p := start(t, s)
	exited := make(chan int, 1)
	go func() { c, _ := p.Wait(); exited <- c }()
	select {
	case c := <-exited:
		if c != 0 {
			t.Fatalf("exit %d", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server is still writing its stderr while the log is stalled")
	}
	if readLine(t, p.Stdout) != "done" {
		t.Fatal("no done")
	}
	close(h.release)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := sl.Close(); err != nil {
		t.Fatal(err)
	}
	recs := records(t, []byte(buf.String()))
	logged, dropped := 0, 0
	for _, r := range recs {
		switch r.Msg {
		case MsgStderrLine:
			logged++
		case MsgStderrDropped:
			dropped += r.Lines
		}
	}
	if logged+dropped != 20000 || dropped == 0 || sl.Dropped() != int64(dropped) {
		t.Fatalf("%d lines logged, %d dropped (%d counted): want 20000 in all, some dropped", logged, dropped, sl.Dropped())
	}
	if strings.Contains(buf.String(), ghToken) {
		t.Fatal("a token in the log")
	}
}

// Write takes any cut of the bytes: lines split over writes, several lines
// in one write, an overlong line across writes.
func TestStderrLogWrites(t *testing.T) {
	var buf syncbuf.Buffer
	sl := NewStderrLog(slog.New(slog.NewJSONHandler(&buf, nil)), StderrLogOptions{MaxLine: 10})
	for _, w := range []string{"he", "llo\nwor", "ld\n\n", "0123456789", "ABCDEF", " xyz\nend"} {
		if n, err := sl.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	_ = sl.Close()
	_ = sl.Close()
	if n, err := sl.Write([]byte("after\n")); n != 6 || err != nil {
		t.Fatalf("Write after Close: %d %v", n, err)
	}
	var got []string
	for _, r := range records(t, []byte(buf.String())) {
		got = append(got, fmt.Sprintf("%s/%d", r.Line, r.Cut))
	}
	// The overlong line keeps nothing of the run it was cut in.
	want := []string{"hello/0", "world/0", "/0", "/20", "end/0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("records %q, want %q", got, want)
	}
	if sl.Dropped() != 1 {
		t.Fatalf("dropped %d, want the line after Close", sl.Dropped())
	}
}
