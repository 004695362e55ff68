//go:build integration

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

// The page in a pod, as the README's page section runs it: the operator starts it in the executor's
// container with kubectl exec (so that its registration code reaches the operator's terminal, not the
// container's log) and forwards its port; the person registers through the forward.
const (
	pageOrigin  = "http://localhost:8443"
	pagePasskey = "/var/lib/mcp-executor/page-passkey.json"
)

var (
	pageSaysCode   = regexp.MustCompile(`registration code ([A-Z2-7]{4}(?:-[A-Z2-7]{4}){7})\n`)
	forwardingFrom = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:([0-9]+) -> 8443`)
)

// TestPageFromTheAgentContainer runs the person's page in the pod and tries it from the agent's
// container, which shares the pod's loopback: the agent reaches the page and takes a CSRF token of its
// own, but without the registration code it gets no registration challenge (no code, wrong codes), a
// registration it makes up (its own key, the flags set by hand, a token of its own) is refused, and
// nowhere it can look holds the code (its file system; the executor's container log, which the test reads
// as an operator, does not hold it either). The person registers through the port-forward with the code
// the operator's kubectl exec session shows; the agent then sees the person's passkey on the page, and
// the spent code starts nothing, not even a replacement.
func TestPageFromTheAgentContainer(t *testing.T) {
	r := kc.newRelease(t, "page", "emptyDir")
	r.install(t)
	pod := r.pod(t).Name

	// 1. The operator starts the page.
	pageOut := &syncbuf.Buffer{}
	pageCmd := exec.Command("kubectl", "exec", "-n", r.ns, pod, "-c", "executor", "--", "mcp-executor", "page",
		"--config", "/etc/mcp-executor/executor.json", "--passkey", pagePasskey)
	pageCmd.Env = append(os.Environ(), "KUBECONFIG="+r.c.kubeconfig)
	pageCmd.Stdout, pageCmd.Stderr = pageOut, pageOut
	if err := pageCmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Without a terminal the page outlives kubectl; it ends with the pod when the namespace goes.
	t.Cleanup(func() { _ = pageCmd.Process.Kill(); _ = pageCmd.Wait() })
	var code string
	eventually(t, time.Minute, "the page to serve and print its registration code", func() (bool, error) {
		out := pageOut.String()
		if m := pageSaysCode.FindStringSubmatch(out); m != nil && strings.Contains(out, "open "+pageOrigin) {
			code = m[1]
			return true, nil
		}
		return false, fmt.Errorf("the page said %q", out)
	})

	// 2. The agent, from its own container.
	agent := func(script string) string {
		t.Helper()
		out, errOut, err := r.c.kubectl(ctxFor(t, time.Minute), "exec", "-n", r.ns, pod, "-c", "agent", "--", "sh", "-c", agentHelpers+"{ "+script+"\n} 2>&1")
		if err != nil {
			t.Fatalf("the agent's script: %v\n%s%s", err, out, errOut)
		}
		return strings.TrimSpace(out)
	}
	if out := agent(`get / | grep -c 'name="csrf-token"'`); out != "1" {
		t.Fatalf("the agent does not reach the page (this test is about an agent that does): %q", out)
	}
	wrong := otherPageCode(t, code)
	forger := newPodPasskey(t)
	made := make([]byte, 32)
	rand.Read(made)
	forged, _ := json.Marshal(map[string]any{"token": canon.NewID(), "registration": forger.register(made)})
	got := agent(`T=$(token)
post "$T" /api/register/begin '{}'
post "$T" /api/register/begin '{"code":"` + wrong + `"}'
post "$T" /api/register/begin '{"code":"` + strings.ToLower(wrong) + `"}'
post "$T" /api/register/finish '` + string(forged) + `'`)
	if want := "403\n403\n403\n409"; got != want {
		t.Fatalf("the agent's registration attempts were answered\n%s\nwant\n%s", got, want)
	}
	// What the agent can look through holds no code.
	if out := agent(`find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o -type f -print 2>/dev/null | xargs grep -l -e '` +
		code + `' -e '` + strings.ReplaceAll(code, "-", "") + `' 2>/dev/null; true`); out != "" {
		t.Errorf("the agent finds the code in %s", out)
	}

	// 3. The person, through the port-forward, with the code from the operator's session.
	person := r.forwardPage(t, pod)
	pk := newPodPasskey(t)
	b := person.must(t, "/api/register/begin", map[string]any{"code": code})
	reg := person.must(t, "/api/register/finish", map[string]any{"token": b["token"], "registration": pk.register(challengeOf(t, b))})
	thumbprint, _ := reg["thumbprint"].(string)
	if !canon.IsFingerprint(thumbprint) {
		t.Fatalf("registered %v", reg)
	}

	// 4. The agent sees the person's passkey; the spent code and wrong ones start nothing.
	if out := agent(`get /api/state`); !strings.Contains(out, `"thumbprint":"`+thumbprint+`"`) {
		t.Errorf("the page's state as the agent reads it: %s", out)
	}
	got = agent(`T=$(token)
post "$T" /api/register/begin '{"code":"` + code + `"}'
post "$T" /api/register/begin '{"code":"` + wrong + `"}'`)
	if want := "410\n410"; got != want {
		t.Errorf("the agent's attempts after the registration were answered %q, want %q", got, want)
	}

	// 5. The code was on the operator's session once, and is not in the executor's container log.
	if n := strings.Count(pageOut.String(), code); n != 1 {
		t.Errorf("the operator's session shows the code %d times, want once:\n%s", n, pageOut.String())
	}
	if logs := r.logs(t, pod, false); strings.Contains(logs, code) || strings.Contains(logs, strings.ReplaceAll(code, "-", "")) {
		t.Errorf("the executor container's log holds the code:\n%s", logs)
	}
	if !strings.Contains(pageOut.String(), `"msg":"page: a passkey was registered"`) {
		t.Errorf("the page did not log the registration:\n%s", pageOut.String())
	}
}

// agentHelpers are shell functions the agent's scripts use, with busybox wget: get PATH prints the
// page's answer; token prints the CSRF token of a GET / of its own; post TOKEN PATH BODY prints the
// HTTP status of a POST sent as the page's script would send it (the page's Origin, the token in the
// cookie and the header).
const agentHelpers = `page=http://127.0.0.1:8443
get() { wget -q -O - --header 'Host: localhost:8443' "$page$1"; }
token() { get / | sed -n 's/.*name="csrf-token" content="\([A-Za-z0-9_-]*\)".*/\1/p'; }
post() { wget -S -q -O /dev/null --header 'Host: localhost:8443' --header 'Origin: http://localhost:8443' \
  --header "Cookie: page_csrf=$1" --header "X-CSRF-Token: $1" --header 'Content-Type: application/json' \
  --post-data "$3" "$page$2" 2>&1 | sed -n 's/^ *HTTP\/1\.[01] \([0-9][0-9][0-9]\).*/\1/p' | head -n 1; }
`

// otherPageCode is a code of the right form that is not code.
func otherPageCode(t *testing.T, code string) string {
	t.Helper()
	b, err := page.ParseCode(code)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	return page.FormatCode(b)
}

// pageSession is the person's browser session of the page through the port-forward.
type pageSession struct {
	http   *http.Client
	token  string
	cookie *http.Cookie
}

// forwardPage forwards a free local port to the page's port in the pod and opens a session there (the
// client sends the page's Host and Origin, as a browser at http://localhost:8443 would).
func (r *release) forwardPage(t *testing.T, pod string) *pageSession {
	t.Helper()
	cmd := exec.Command("kubectl", "port-forward", "-n", r.ns, "pod/"+pod, "--address", "127.0.0.1", ":8443")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+r.c.kubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut := &syncbuf.Buffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := forwardingFrom.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
			}
		}
	}()
	var addr string
	select {
	case p := <-port:
		addr = "127.0.0.1:" + p
	case <-time.After(time.Minute):
		t.Fatalf("kubectl port-forward did not start: %s", errOut.String())
	}
	s := &pageSession{http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}}}}
	resp, err := s.http.Get(pageOrigin + "/")
	if err != nil {
		t.Fatalf("the page through the port-forward: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`<meta name="csrf-token" content="([A-Za-z0-9_-]+)">`).FindSubmatch(body)
	if m == nil || len(resp.Cookies()) != 1 {
		t.Fatalf("the page gave no CSRF token through the port-forward: %d %s", resp.StatusCode, body)
	}
	s.token, s.cookie = string(m[1]), resp.Cookies()[0]
	return s
}

func (s *pageSession) must(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", pageOrigin+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", pageOrigin)
	req.Header.Set("X-CSRF-Token", s.token)
	req.AddCookie(s.cookie)
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s through the port-forward: %d %s", path, resp.StatusCode, raw)
	}
	return out
}

func challengeOf(t *testing.T, out map[string]any) []byte {
	t.Helper()
	c, _ := out["challenge"].(string)
	b, err := canon.UnB64(c)
	if err != nil || len(b) != 32 {
		t.Fatalf("no challenge in %v", out)
	}
	return b
}

// podPasskey is a software ES256 key answering a registration as navigator.credentials.create would on
// the page's origin: the person's (no browser reaches the pod here; the browser's path is tested in
// sidecar/page/e2e), or the agent's forgery (the flags set by hand).
type podPasskey struct {
	key *ecdsa.PrivateKey
	id  []byte
}

func newPodPasskey(t *testing.T) *podPasskey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &podPasskey{key: k, id: id}
}

func (p *podPasskey) register(challenge []byte) page.Registration {
	spki, _ := x509.MarshalPKIXPublicKey(&p.key.PublicKey)
	rp := sha256.Sum256([]byte("localhost"))
	ad := append(rp[:], 0x45) // user present, user verified, attested credential data
	ad = binary.BigEndian.AppendUint32(ad, 1)
	ad = append(ad, append(make([]byte, 16), 0, 16)...)
	cd := `{"type":"webauthn.create","challenge":"` + canon.B64(challenge) + `","origin":"` + pageOrigin + `","crossOrigin":false}`
	return page.Registration{CredentialID: canon.B64(p.id), ClientDataJSON: canon.B64([]byte(cd)), AuthenticatorData: canon.B64(ad),
		PublicKey: canon.B64(spki), Algorithm: -7}
}
