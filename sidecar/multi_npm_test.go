package sidecar_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// multiEnv is an executor in front of server-filesystem as "fs" and
// server-everything as "ev" (and, when httpURL is set, the everything
// server over streamable HTTP as "web").
type multiEnv struct {
	env  *devsetup.Env
	data string // the filesystem server's folder
}

func newMultiEnv(t *testing.T, httpURL string) *multiEnv {
	t.Helper()
	if executorBin == "" {
		t.Fatal("these tests run the mcp-executor binary, which could not be built")
	}
	node, fsEntry := npmServer(t, "server-filesystem")
	_, evEntry := npmServer(t, "server-everything")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(data, f), []byte("hello from "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env, err := devsetup.Build(devsetup.Options{
		Dir: filepath.Join(dir, "x"), Command: node, Args: []string{fsEntry, data},
		Tools: map[string]devsetup.Tool{
			"r": {Action: "provared.data.read"}, "w": {Action: "provared.data.create"}, "e": {Action: "provared.code.run"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(env.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	passEnv := testPassEnv
	servers := map[string]any{
		"fs": map[string]any{"command": node, "args": []string{fsEntry, data}, "passEnv": passEnv},
		"ev": map[string]any{"command": node, "args": []string{evEntry, "stdio"}, "passEnv": passEnv},
	}
	tools := map[string]any{
		"fs.read_*":       map[string]any{"action": "provared.data.read"},
		"fs.list_*":       map[string]any{"action": "provared.data.read"},
		"fs.search_files": map[string]any{"action": "provared.data.read", "quota": map[string]any{"perMinute": 3}},
		"fs.write_file":   map[string]any{"action": "provared.data.create"},
		"fs.move_file":    map[string]any{"refuse": true},
		"ev.echo":         map[string]any{"action": "provared.code.run"},
		"ev.get-sum":      map[string]any{"action": "provared.code.run"},
	}
	if httpURL != "" {
		servers["web"] = map[string]any{"url": httpURL}
		tools["web.echo"] = map[string]any{"action": "provared.code.run"}
	}
	delete(set, "server")
	set["servers"] = servers
	set["tools"] = tools
	out, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.SettingsPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return &multiEnv{env: env, data: data}
}

// editSettings reads the settings file at path as JSON, lets edit change
// it, and writes it back.
func editSettings(t *testing.T, path string, edit func(set map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	edit(set)
	if raw, err = json.Marshal(set); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

type step struct {
	Op   string         `json:"op"`
	Name string         `json:"name,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

type stepResult struct {
	Tools []struct {
		Name        string          `json:"name"`
		Annotations json.RawMessage `json:"annotations"`
	} `json:"tools"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool           `json:"isError"`
	Meta    map[string]any `json:"_meta"`
	Error   string         `json:"error"`
}

func (r stepResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// run starts the TypeScript client, which starts the executor, and runs
// the steps; it returns their results and the executor's stderr.
func (m *multiEnv) run(t *testing.T, steps ...step) ([]stepResult, string) {
	t.Helper()
	return m.runPlan(t, map[string]any{"steps": steps}, len(steps))
}

// runPlan runs the TypeScript client on plan (its steps and any other plan
// members) to its end and returns its results, which must be n, and its
// stderr.
func (m *multiEnv) runPlan(t *testing.T, plan map[string]any, n int) ([]stepResult, string) {
	t.Helper()
	cmd, stdout, stderr := m.startClient(t, plan)
	return waitClient(t, cmd, stdout, stderr, n), stderr.String()
}

// waitClient waits for a client startClient started and returns its
// results, which must be n.
func waitClient(t *testing.T, cmd *exec.Cmd, stdout, stderr *syncbuf.Buffer, n int) []stepResult {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the client: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		Steps []stepResult `json:"steps"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("the client's output %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	if len(out.Steps) != n {
		t.Fatalf("%d results for %d steps", len(out.Steps), n)
	}
	return out.Steps
}

// startClient writes plan and starts the TypeScript client on it, in front
// of the executor; the caller waits for it.
func (m *multiEnv) startClient(t *testing.T, plan map[string]any) (cmd *exec.Cmd, stdout, stderr *syncbuf.Buffer) {
	t.Helper()
	data, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	node, _ := npmServer(t, "server-filesystem")
	client, err := filepath.Abs(filepath.Join("..", "testdata", "multi", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(node, client, planPath, executorBin, "stdio", "--config", m.env.SettingsPath)
	stdout, stderr = &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// checkRecords runs verify and compare on the book and the copy.
func (m *multiEnv) checkRecords(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{
		{"verify", m.env.BookPath, "--trust", m.env.Thumbprint},
		{"compare", "--config", m.env.SettingsPath},
	} {
		if out, err := exec.Command(executorBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
	}
}

func (m *multiEnv) copyLines(t *testing.T) []copylog.Line {
	t.Helper()
	lines, err := copylog.ReadFile(m.env.CopyPath, m.env.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// Two real servers behind one executor: the namespaced listing, a glob
// rule, a refuse rule, a redacted secret that reaches the server whole,
// and the stub naming the server.
func TestMultiServersTypeScriptClient(t *testing.T) {
	t.Parallel()
	m := newMultiEnv(t, "")
	secret := "sk-proj-" + strings.Repeat("Ab1", 12)
	content := "config\napi_key=" + secret + "\n"
	res, stderr := m.run(t,
		step{Op: "list"},
		step{Op: "call", Name: "fs.read_text_file", Args: map[string]any{"path": filepath.Join(m.data, "a.txt")}},
		step{Op: "call", Name: "fs.move_file", Args: map[string]any{"source": filepath.Join(m.data, "a.txt"), "destination": filepath.Join(m.data, "c.txt")}},
		step{Op: "call", Name: "fs.write_file", Args: map[string]any{"path": filepath.Join(m.data, "key.txt"), "content": content}},
		step{Op: "call", Name: "ev.echo", Args: map[string]any{"message": secret}},
		step{Op: "call", Name: "fs.create_directory", Args: map[string]any{"path": filepath.Join(m.data, "d")}},
	)
	names := map[string]bool{}
	for _, tl := range res[0].Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"fs.read_text_file", "fs.move_file", "fs.write_file", "ev.echo", "ev.get-sum"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for n := range names {
		if !strings.HasPrefix(n, "fs.") && !strings.HasPrefix(n, "ev.") {
			t.Errorf("tool %q is not namespaced", n)
		}
	}
	if r := res[1]; r.IsError || !strings.Contains(r.text(), "hello from a.txt") {
		t.Errorf("fs.read_text_file (allowed by the glob fs.read_*): %+v", r)
	}
	if r := res[2]; !r.IsError || r.Meta["red.prova/refused"] != "refused-by-rule" {
		t.Errorf("fs.move_file (refuse rule): %+v", r)
	}
	if _, err := os.Stat(filepath.Join(m.data, "a.txt")); err != nil {
		t.Errorf("the refused move reached the server: %v", err)
	}
	if r := res[3]; r.IsError {
		t.Errorf("fs.write_file: %+v", r)
	}
	got, err := os.ReadFile(filepath.Join(m.data, "key.txt"))
	if err != nil || string(got) != content {
		t.Errorf("the server got %q, want the content whole %q (%v)", got, content, err)
	}
	if r := res[4]; r.IsError || !strings.Contains(r.text(), secret) {
		t.Errorf("ev.echo must echo the secret it got unchanged: %+v", r)
	}
	if r := res[5]; !r.IsError || r.Meta["red.prova/refused"] != "unlisted" {
		t.Errorf("fs.create_directory (no rule): %+v", r)
	}
	if strings.Contains(stderr, secret) || strings.Contains(stderr, "Ab1Ab1Ab1") {
		t.Errorf("the logs hold the secret")
	}
	// The copy names the server of every sent call, and holds a salt.
	salt := false
	servers := map[string]string{}
	for _, ln := range m.copyLines(t) {
		if ln.Kind == copylog.KindRedactionSalt {
			salt = true
		}
		if ln.Kind == copylog.KindSent {
			for _, d := range ln.Details {
				if d.Name == receipt.LabelServer {
					servers[ln.Tool] = d.SHA256
				}
			}
		}
	}
	if !salt {
		t.Error("the copy holds no redaction salt")
	}
	for tool, srv := range map[string]string{"fs.read_text_file": "fs", "fs.write_file": "fs", "ev.echo": "ev"} {
		if servers[tool] != canon.Fingerprint([]byte(srv)) {
			t.Errorf("the stub of %s does not name server %s under %s", tool, srv, receipt.LabelServer)
		}
	}
	m.checkRecords(t)
	rep := m.report(t)
	if strings.Contains(string(rep.raw), secret) {
		t.Error("report shows the secret")
	}
	if u := rep.tool("fs.move_file"); u.Refused["rule"] != 1 || u.Allowed != 0 {
		t.Errorf("report fs.move_file: %+v", u)
	}
	if u := rep.tool("fs.create_directory"); u.Refused["unlisted"] != 1 {
		t.Errorf("report fs.create_directory: %+v", u)
	}
	if u := rep.tool("fs.write_file"); u.Calls != 1 || u.Allowed != 1 || u.Errors != 0 {
		t.Errorf("report fs.write_file: %+v", u)
	}
	if !rep.CompareOK {
		t.Errorf("report: compare %s", rep.Compare)
	}
}

// The fourth fs.search_files in a minute is refused by its quota, still
// after a restart (the window is counted from the copy), and allowed again
// once the minute of the oldest call has passed, by the copy's own dates.
// This is the one test that waits for a window to pass (up to a minute, on
// a deadline read from the copy); it runs beside the others.
func TestMultiServersQuota(t *testing.T) {
	t.Parallel()
	m := newMultiEnv(t, "")
	search := step{Op: "call", Name: "fs.search_files", Args: map[string]any{"path": m.data, "pattern": "a"}}
	res, _ := m.run(t, search, search, search, search)
	for i := range 3 {
		if res[i].IsError {
			t.Fatalf("search %d: %+v", i+1, res[i])
		}
	}
	r := res[3]
	if !r.IsError || r.Meta["red.prova/refused"] != "quota" || !strings.Contains(r.text(), "quota fs.search_files: 3 per minute used; retry after") {
		t.Fatalf("the fourth search: %+v", r)
	}
	// The window frees when the oldest of the three sent calls, as the
	// copy dates it, is a minute old.
	var sent []time.Time
	for _, ln := range m.copyLines(t) {
		if ln.Kind == copylog.KindSent && ln.Tool == "fs.search_files" {
			sent = append(sent, ln.When)
		}
	}
	if len(sent) != 3 {
		t.Fatalf("%d sent lines of fs.search_files in the copy, want 3", len(sent))
	}
	free := slices.MinFunc(sent, time.Time.Compare).Add(time.Minute)

	// A restart within the minute: still refused, and the retry-after is
	// the time left until free (rounded up to a second) as of the refusal.
	before := time.Now()
	res, _ = m.run(t, search)
	after := time.Now()
	if !res[0].IsError || res[0].Meta["red.prova/refused"] != "quota" {
		t.Fatalf("after a restart within the minute: %+v", res[0])
	}
	retry := retryAfter(t, res[0].text())
	if after.Add(retry).Before(free) || before.Add(retry).After(free.Add(time.Second)) {
		t.Fatalf("retry after %s, refused between %s and %s; the window frees at %s (the copy's oldest call and a minute)",
			retry, before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano), free.Format(time.RFC3339Nano))
	}

	// After the window, a new executor (restored from the same copy)
	// allows the call.
	time.Sleep(time.Until(free))
	res, _ = m.run(t, search)
	if res[0].IsError {
		t.Fatalf("after the window passed: %+v", res[0])
	}
	m.checkRecords(t)
	if u := m.report(t).tool("fs.search_files"); u.Calls != 6 || u.Allowed != 4 || u.Refused["quota"] != 2 || u.Server.P99 <= 0 {
		t.Errorf("report fs.search_files: %+v", u)
	}
}

// retryAfter reads the duration of a quota refusal's "retry after 41s".
func retryAfter(t *testing.T, text string) time.Duration {
	t.Helper()
	_, rest, ok := strings.Cut(text, "retry after ")
	if !ok {
		t.Fatalf("no retry-after in %q", text)
	}
	if i := strings.IndexFunc(rest, func(r rune) bool { return r == ' ' || r == ';' || r == '\n' || r == ')' }); i >= 0 {
		rest = rest[:i]
	}
	d, err := time.ParseDuration(strings.TrimSuffix(rest, "."))
	if err != nil || d <= 0 {
		t.Fatalf("the retry-after of %q: %v", text, err)
	}
	return d
}

// freePort is a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// startEverythingHTTP starts the everything server in streamable HTTP mode
// on port and waits until it listens; stop ends it (also at the test's end).
func startEverythingHTTP(t *testing.T, port string) (stop func()) {
	t.Helper()
	node, evEntry := npmServer(t, "server-everything")
	srv := exec.Command(node, evEntry, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	errPipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { _ = srv.Process.Kill(); _ = srv.Wait() }) }
	t.Cleanup(stop)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errPipe)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), "listening on port") {
				seen = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the everything server did not start listening within 30s")
	}
	return stop
}

// The everything server over streamable HTTP behind the executor, beside
// a stdio server, with its receipts.
func TestMultiServersHTTP(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	startEverythingHTTP(t, port)
	m := newMultiEnv(t, "http://127.0.0.1:"+port+"/mcp")
	res, _ := m.run(t,
		step{Op: "list"},
		step{Op: "call", Name: "web.echo", Args: map[string]any{"message": "over http"}},
		step{Op: "call", Name: "ev.echo", Args: map[string]any{"message": "over stdio"}},
	)
	found := false
	for _, tl := range res[0].Tools {
		if tl.Name == "web.echo" {
			found = true
		}
	}
	if !found {
		t.Errorf("tools/list lacks web.echo")
	}
	if r := res[1]; r.IsError || !strings.Contains(r.text(), "over http") {
		t.Errorf("web.echo: %+v", r)
	}
	if r := res[2]; r.IsError || !strings.Contains(r.text(), "over stdio") {
		t.Errorf("ev.echo: %+v", r)
	}
	receipts := 0
	servers := map[string]string{}
	for _, ln := range m.copyLines(t) {
		switch ln.Kind {
		case copylog.KindReceipt:
			receipts++
		case copylog.KindSent:
			for _, d := range ln.Details {
				if d.Name == receipt.LabelServer {
					servers[ln.Tool] = d.SHA256
				}
			}
		}
	}
	if receipts != 2 {
		t.Errorf("%d receipts in the copy, want 2", receipts)
	}
	if servers["web.echo"] != canon.Fingerprint([]byte("web")) || servers["ev.echo"] != canon.Fingerprint([]byte("ev")) {
		t.Errorf("the stubs do not name their servers under %s: %v", receipt.LabelServer, servers)
	}
	m.checkRecords(t)
	// `tools` lists the HTTP server's tools with its annotations too.
	out, err := exec.Command(executorBin, "tools", "--config", m.env.SettingsPath, "--json").Output()
	if err != nil {
		t.Fatalf("tools: %v\n%s", err, out)
	}
	var listed struct {
		Tools []struct {
			Name, Server, Decision string
			Annotations            map[string]any
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, tl := range listed.Tools {
		if tl.Name == "web.echo" {
			found = true
			if tl.Server != "web" || tl.Decision != "allow" || tl.Annotations["readOnlyHint"] != true {
				t.Errorf("tools: web.echo %+v", tl)
			}
		}
	}
	if !found {
		t.Errorf("tools lacks web.echo: %s", out)
	}
}

// `tools --json` starts both servers and shows their annotations beside
// the decision and the rule; a destructive tool allowed without approval
// is warned about.
func TestMultiServersToolsCommand(t *testing.T) {
	t.Parallel()
	m := newMultiEnv(t, "")
	out, err := exec.Command(executorBin, "tools", "--config", m.env.SettingsPath, "--json").Output()
	if err != nil {
		t.Fatalf("tools: %v\n%s", err, out)
	}
	var res struct {
		Tools []struct {
			Name        string         `json:"name"`
			Server      string         `json:"server"`
			Decision    string         `json:"decision"`
			Rule        string         `json:"rule"`
			Annotations map[string]any `json:"annotations"`
			Quota       map[string]any `json:"quota"`
			Warning     string         `json:"warning"`
		} `json:"tools"`
		Failures []any `json:"failures"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for i, tl := range res.Tools {
		by[tl.Name] = i
	}
	for name, want := range map[string][2]string{
		"fs.read_text_file":   {"allow", "glob:fs.read_*"},
		"fs.move_file":        {"refuse", "exact"},
		"fs.search_files":     {"allow", "exact"},
		"fs.create_directory": {"unlisted", ""},
		"ev.echo":             {"allow", "exact"},
	} {
		i, ok := by[name]
		if !ok {
			t.Errorf("tools lacks %s", name)
			continue
		}
		if tl := res.Tools[i]; tl.Decision != want[0] || tl.Rule != want[1] {
			t.Errorf("%s: %s %q, want %s %q", name, tl.Decision, tl.Rule, want[0], want[1])
		}
	}
	if tl := res.Tools[by["fs.read_text_file"]]; tl.Annotations["readOnlyHint"] != true || tl.Server != "fs" {
		t.Errorf("fs.read_text_file: the server's annotations are not shown: %+v", tl)
	}
	if tl := res.Tools[by["fs.search_files"]]; tl.Quota["PerMinute"] == nil && tl.Quota["perMinute"] == nil {
		t.Errorf("fs.search_files: no quota shown: %+v", tl)
	}
	if tl := res.Tools[by["fs.write_file"]]; tl.Annotations["destructiveHint"] != true || tl.Warning == "" {
		t.Errorf("fs.write_file (destructive, allowed): no warning: %+v", tl)
	}
	if len(res.Failures) != 0 {
		t.Errorf("failures: %v", res.Failures)
	}
}

type usageReport struct {
	raw   []byte
	Tools []struct {
		Tool    string         `json:"tool"`
		Calls   int            `json:"calls"`
		Allowed int            `json:"allowed"`
		Refused map[string]int `json:"refused"`
		Errors  int            `json:"errors"`
		Server  struct {
			P99 int64 `json:"p99Ms"`
		} `json:"serverTime"`
	} `json:"tools"`
	Compare   string `json:"compare"`
	CompareOK bool   `json:"compareOK"`
}

func (r *usageReport) tool(name string) (u struct {
	Tool    string         `json:"tool"`
	Calls   int            `json:"calls"`
	Allowed int            `json:"allowed"`
	Refused map[string]int `json:"refused"`
	Errors  int            `json:"errors"`
	Server  struct {
		P99 int64 `json:"p99Ms"`
	} `json:"serverTime"`
}) {
	for _, t := range r.Tools {
		if t.Tool == name {
			return t
		}
	}
	return u
}

// report runs `report --json` on the records.
func (m *multiEnv) report(t *testing.T) *usageReport {
	t.Helper()
	out, err := exec.Command(executorBin, "report", "--config", m.env.SettingsPath, "--json").Output()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	r := &usageReport{raw: out}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A write_file held for approval: the queue file a person reads and the
// elicitation the agent's client is asked show the fake key redacted (a
// token the copy's salt verifies), the server gets the content whole once
// approved, and report and the logs never show it.
func TestMultiServersRedactedApproval(t *testing.T) {
	t.Parallel()
	m := newMultiEnv(t, "")
	editSettings(t, m.env.SettingsPath, func(set map[string]any) {
		set["tools"].(map[string]any)["fs.write_file"].(map[string]any)["approve"] = true
	})
	secret := "sk-proj-" + strings.Repeat("Zq9", 12)
	content := "token file\napi_key=" + secret + "\n"
	asked := filepath.Join(t.TempDir(), "asked.jsonl")
	cmd, stdout, stderr := m.startClient(t, map[string]any{"elicitTo": asked, "steps": []step{{Op: "call", Name: "fs.write_file",
		Args: map[string]any{"path": filepath.Join(m.data, "key.txt"), "content": content}}}})
	h := &harness{t: t, env: m.env, stderr: stderr}
	f := waitRequests(t, h, 1)[0]
	shown := string(f.Arguments)
	if strings.Contains(shown, secret) || !strings.Contains(shown, "[REDACTED:") {
		t.Fatalf("the approval request shows %s", shown)
	}
	// The elicitation the client got names the request and shows the
	// arguments as the queue file does.
	var question string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(asked); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			if err := json.Unmarshal(bytes.TrimSpace(b), &question); err != nil {
				t.Fatalf("the client's record of the elicitation %q: %v", b, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client was not asked within 20s; stderr:\n%s", stderr.String())
		}
	}
	if strings.Contains(question, secret) || !strings.Contains(question, "[REDACTED:") || !strings.Contains(question, f.ID) {
		t.Fatalf("the elicitation asks %q", question)
	}
	files, _ := filepath.Glob(filepath.Join(queueDir(h), "*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
			t.Fatalf("queue file %s holds the secret", p)
		}
	}
	if _, err := os.Stat(filepath.Join(m.data, "key.txt")); err == nil {
		t.Fatal("the server wrote the file before the approval")
	}
	if out, code := runExecutor(t, "approve", "--config", m.env.SettingsPath, "--id", f.ID, "--yes"); code != 0 {
		t.Fatalf("approve exits %d: %s", code, out)
	}
	if r := waitClient(t, cmd, stdout, stderr, 1)[0]; r.IsError || r.Error != "" {
		t.Fatalf("the approved write answered %+v", r)
	}
	got, err := os.ReadFile(filepath.Join(m.data, "key.txt"))
	if err != nil || string(got) != content {
		t.Fatalf("the server wrote %q (%v), want the content whole", got, err)
	}
	if strings.Contains(stderr.String(), secret) {
		t.Error("the logs hold the secret")
	}
	// The token in the request is the secret's under the copy's salt.
	salt := copylog.LatestSalt(m.copyLines(t))
	i := strings.Index(shown, "[REDACTED:")
	j := strings.Index(shown[i:], "]")
	if salt == nil || !redact.Verify(salt, secret, shown[i:i+j+1]) {
		t.Errorf("the token %s is not the secret's under the copy's salt", shown[i:i+j+1])
	}
	if !strings.Contains(question, shown[i:i+j+1]) {
		t.Errorf("the elicitation %q does not show the token %s", question, shown[i:i+j+1])
	}
	rep := m.report(t)
	if strings.Contains(string(rep.raw), secret) {
		t.Error("report shows the secret")
	}
	if u := rep.tool("fs.write_file"); u.Allowed != 1 {
		t.Errorf("report fs.write_file: %+v", u)
	}
	m.checkRecords(t)
}

// `tools` exits 1 and names the server that cannot start, and still lists
// the others.
func TestMultiServersToolsCommandServerFails(t *testing.T) {
	t.Parallel()
	m := newMultiEnv(t, "")
	falseBin, err := exec.LookPath("false")
	if err != nil {
		t.Fatal(err)
	}
	editSettings(t, m.env.SettingsPath, func(set map[string]any) {
		set["servers"].(map[string]any)["ev"] = map[string]any{"command": falseBin, "passEnv": []string{"PATH"}}
	})
	out, code := runExecutor(t, "tools", "--config", m.env.SettingsPath)
	if code != 1 || !strings.Contains(out, "tool server ev could not be listed") || !strings.Contains(out, "fs.read_text_file") {
		t.Fatalf("tools exits %d:\n%s", code, out)
	}
}

// With the single "server" form, `tools` lists the tools under their own
// names, decided by exact and glob rules alike.
func TestToolsCommandSingleServer(t *testing.T) {
	t.Parallel()
	node, entry := npmServer(t, "server-everything")
	env, err := devsetup.Build(devsetup.Options{
		Dir: t.TempDir(), Command: node, Args: []string{entry, "stdio"},
		Tools: map[string]devsetup.Tool{"echo": {Action: "provared.code.run"}, "get-*": {Action: "provared.data.read"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, code := runExecutor(t, "tools", "--config", env.SettingsPath, "--json")
	if code != 0 {
		t.Fatalf("tools exits %d: %s", code, out)
	}
	var res struct {
		Tools []struct{ Name, Decision, Rule string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl.Decision + " " + tl.Rule
	}
	if got["echo"] != "allow exact" || got["get-sum"] != "allow glob:get-*" {
		t.Fatalf("tools: %v", got)
	}
}

// hostileMCP is an HTTP tool server that answers initialize and
// tools/list as MCP asks and each tool call wrongly: web.otherid under
// another id, web.dup with a duplicate member, web.big with an answer over
// 16 MiB. It is written here because no real server misbehaves on purpose.
// auth gets the Authorization header of every request.
func hostileMCP(auth func(string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth(r.Header.Get("Authorization"))
		if r.Method == http.MethodDelete {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := func(result string) string {
			return `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
		}
		var body string
		switch {
		case req.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "hostile-1")
			body = answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`)
		case req.Method == "tools/list":
			body = answer(`{"tools":[{"name":"otherid","inputSchema":{"type":"object"}},{"name":"dup","inputSchema":{"type":"object"}},{"name":"big","inputSchema":{"type":"object"}}]}`)
		case req.Params.Name == "otherid":
			body = `{"jsonrpc":"2.0","id":"not-yours","result":{"content":[]}}`
		case req.Params.Name == "dup":
			body = `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[],"content":[]}}`
		case req.Params.Name == "big":
			body = answer(`{"content":[{"type":"text","text":"` + strings.Repeat("a", 17<<20) + `"}]}`)
		default:
			body = `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"no such method"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

// A misbehaving HTTP server behind the executor: each bad answer ends its
// call at once with an error the client sees and a receipt (verify and
// compare pass); the server's answer under another id is dropped; a server
// whose certificate does not verify is refused (`tools` says so). Every
// request carries the header read from its secret file.
func TestMultiServersHostileHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	auths := map[string]int{}
	srv := httptest.NewServer(hostileMCP(func(a string) { mu.Lock(); auths[a]++; mu.Unlock() }))
	defer srv.Close()
	m := newMultiEnv(t, srv.URL+"/mcp")
	if err := os.MkdirAll(filepath.Join(filepath.Dir(m.env.SettingsPath), "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(m.env.SettingsPath), "secrets", "web-token"), []byte("Bearer w3b-t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	editSettings(t, m.env.SettingsPath, func(set map[string]any) {
		tools := set["tools"].(map[string]any)
		delete(tools, "web.echo")
		tools["web.*"] = map[string]any{"action": "provared.code.run"}
		set["servers"].(map[string]any)["web"].(map[string]any)["headers"] = map[string]any{"Authorization": map[string]any{"file": "secrets/web-token"}}
	})
	res, stderr := m.run(t,
		step{Op: "call", Name: "web.otherid"},
		step{Op: "call", Name: "web.dup"},
		step{Op: "call", Name: "web.big"},
		step{Op: "call", Name: "ev.echo", Args: map[string]any{"message": "still here"}},
	)
	for i, want := range []string{"holds no answer to the request", "could not be read as a message", "over 16 MiB"} {
		r := res[i]
		if r.Error == "" && !r.IsError {
			t.Errorf("step %d was answered as a success: %+v", i, r)
		}
		if !strings.Contains(r.Error+r.text(), want) {
			t.Errorf("step %d: %+v, want %q in the error", i, r, want)
		}
	}
	if r := res[3]; r.IsError || !strings.Contains(r.text(), "still here") {
		t.Errorf("ev.echo after the bad answers: %+v", r)
	}
	if !strings.Contains(stderr, "a line from the tool server is dropped") {
		t.Errorf("the answer under another id was not dropped and counted; stderr:\n%s", stderr)
	}
	receipts := 0
	for _, ln := range m.copyLines(t) {
		if ln.Kind == copylog.KindReceipt {
			receipts++
		}
	}
	if receipts != 4 {
		t.Errorf("%d receipts in the copy, want 4", receipts)
	}
	mu.Lock()
	if len(auths) != 1 || auths["Bearer w3b-t0ken"] < 5 {
		t.Errorf("the Authorization headers the server got: %v, want Bearer w3b-t0ken on every request", auths)
	}
	mu.Unlock()
	m.checkRecords(t)

	tlsSrv := httptest.NewUnstartedServer(hostileMCP(func(string) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	editSettings(t, m.env.SettingsPath, func(set map[string]any) {
		set["servers"].(map[string]any)["web"].(map[string]any)["url"] = tlsSrv.URL + "/mcp"
	})
	out, code := runExecutor(t, "tools", "--config", m.env.SettingsPath)
	if code != 1 || !strings.Contains(out, "tool server web could not be listed") || !strings.Contains(out, "TLS certificate did not verify") {
		t.Fatalf("tools in front of a server whose certificate does not verify exits %d:\n%s", code, out)
	}
}

// With "namespaceSeparator": "__" (for clients that refuse dots) the
// listing, the rules and the routing use it.
func TestMultiServersUnderscoreSeparator(t *testing.T) {
	t.Parallel()
	m := newMultiEnv(t, "")
	editSettings(t, m.env.SettingsPath, func(set map[string]any) {
		set["namespaceSeparator"] = "__"
		tools := map[string]any{}
		for name, rule := range set["tools"].(map[string]any) {
			tools[strings.Replace(name, ".", "__", 1)] = rule
		}
		set["tools"] = tools
	})
	res, _ := m.run(t,
		step{Op: "list"},
		step{Op: "call", Name: "fs__read_text_file", Args: map[string]any{"path": filepath.Join(m.data, "b.txt")}},
		step{Op: "call", Name: "ev__echo", Args: map[string]any{"message": "under two underscores"}},
		step{Op: "call", Name: "fs__move_file", Args: map[string]any{"source": filepath.Join(m.data, "a.txt"), "destination": filepath.Join(m.data, "c.txt")}},
	)
	if len(res[0].Tools) < 10 {
		t.Fatalf("tools/list: %+v", res[0])
	}
	for _, tl := range res[0].Tools {
		if !strings.HasPrefix(tl.Name, "fs__") && !strings.HasPrefix(tl.Name, "ev__") || strings.Contains(tl.Name, ".") {
			t.Errorf("tool %q is not named <server>__<tool>", tl.Name)
		}
	}
	if r := res[1]; r.IsError || !strings.Contains(r.text(), "hello from b.txt") {
		t.Errorf("fs__read_text_file (glob fs__read_*): %+v", r)
	}
	if r := res[2]; r.IsError || !strings.Contains(r.text(), "under two underscores") {
		t.Errorf("ev__echo: %+v", r)
	}
	if r := res[3]; !r.IsError || r.Meta["red.prova/refused"] != "refused-by-rule" {
		t.Errorf("fs__move_file (refuse rule): %+v", r)
	}
	m.checkRecords(t)
}

// The everything server restarting behind a running executor loses the
// executor's HTTP session: the next call to it ends at once with an error
// naming the HTTP status and what the server said (400 and its JSON-RPC
// message, where the transport says 404), and is not sent again, with its
// receipt; the stdio servers go on; the call after that begins a new
// session (logged) and goes through, with its receipt.
func TestMultiServersHTTPServerRestart(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	stop := startEverythingHTTP(t, port)
	m := newMultiEnv(t, "http://127.0.0.1:"+port+"/mcp")
	dir := t.TempDir()
	paused, resume := filepath.Join(dir, "paused"), filepath.Join(dir, "resume")
	cmd, stdout, stderr := m.startClient(t, map[string]any{"steps": []step{
		{Op: "call", Name: "web.echo", Args: map[string]any{"message": "before"}},
		{Op: "signal", Name: paused},
		{Op: "waitFile", Name: resume},
		{Op: "call", Name: "web.echo", Args: map[string]any{"message": "after"}},
		{Op: "call", Name: "ev.echo", Args: map[string]any{"message": "stdio goes on"}},
		{Op: "call", Name: "web.echo", Args: map[string]any{"message": "in a new session"}},
	}})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(paused); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client did not reach the pause within 30s; stderr:\n%s", stderr.String())
		}
	}
	stop()
	startEverythingHTTP(t, port)
	if err := os.WriteFile(resume, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := waitClient(t, cmd, stdout, stderr, 6)
	if r := steps[0]; r.IsError || !strings.Contains(r.text(), "before") {
		t.Errorf("web.echo before the restart: %+v", r)
	}
	if r := steps[3]; !strings.Contains(r.Error, "the HTTP tool server answered 400 Bad Request (it says: Bad Request: No valid session ID provided); "+
		"the executor takes it as the session's end: this request was not sent again; the executor begins a new session for the next one") {
		t.Errorf("web.echo after the restart: %+v", r)
	}
	if r := steps[4]; r.IsError || !strings.Contains(r.text(), "stdio goes on") {
		t.Errorf("ev.echo after the restart: %+v", r)
	}
	if r := steps[5]; r.IsError || r.Error != "" || !strings.Contains(r.text(), "in a new session") {
		t.Errorf("web.echo in the new session: %+v", r)
	}
	if n := strings.Count(stderr.String(), "a new session with the HTTP tool server began"); n != 1 {
		t.Errorf("%d new sessions logged, want 1; stderr:\n%s", n, stderr.String())
	}
	if strings.Contains(strings.ToLower(stderr.String()), "mcp-session-id:") {
		t.Errorf("a session header was logged; stderr:\n%s", stderr.String())
	}
	// Each call has its receipt, in the order made: the call that met the
	// ended session binds its error.
	tools := map[string]string{}
	var outcomes []string
	for _, ln := range m.copyLines(t) {
		switch {
		case ln.Kind == copylog.KindSent:
			tools[ln.Call] = ln.Tool
		case ln.Kind == copylog.KindReceipt && ln.Outcome != nil:
			outcomes = append(outcomes, tools[ln.Call]+" "+ln.Outcome.Name)
		}
	}
	want := []string{"web.echo " + receipt.LabelToolResult, "web.echo " + receipt.LabelError,
		"ev.echo " + receipt.LabelToolResult, "web.echo " + receipt.LabelToolResult}
	if strings.Join(outcomes, ", ") != strings.Join(want, ", ") {
		t.Errorf("the receipts: %v, want %v", outcomes, want)
	}
	m.checkRecords(t)
}

// The everything server's own messages over its GET stream reach the
// client through the executor: toggle-simulated-logging sends a log
// message at once outside the call's answer (the TypeScript SDK's server
// puts a notification related to no request on the session's GET stream,
// and drops it when none is open), and the client gets it.
func TestMultiServersHTTPOwnStream(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	startEverythingHTTP(t, port)
	m := newMultiEnv(t, "http://127.0.0.1:"+port+"/mcp")
	editSettings(t, m.env.SettingsPath, func(set map[string]any) {
		set["tools"].(map[string]any)["web.toggle-simulated-logging"] = map[string]any{"action": "provared.code.run"}
	})
	dir := t.TempDir()
	logTo := filepath.Join(dir, "log.jsonl")
	steps, stderr := m.runPlan(t, map[string]any{"logTo": logTo, "steps": []step{
		{Op: "call", Name: "web.toggle-simulated-logging"},
		{Op: "waitFile", Name: logTo},
		{Op: "call", Name: "web.echo", Args: map[string]any{"message": "after the log"}},
	}}, 3)
	if r := steps[0]; r.IsError || !strings.Contains(r.text(), "Started simulated") {
		t.Errorf("web.toggle-simulated-logging: %+v", r)
	}
	if r := steps[1]; r.Error != "" {
		t.Fatalf("no log message reached the client: %+v\nstderr:\n%s", r, stderr)
	}
	if r := steps[2]; r.IsError || !strings.Contains(r.text(), "after the log") {
		t.Errorf("web.echo: %+v", r)
	}
	logged, err := os.ReadFile(logTo)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "message - SessionId ") {
		t.Errorf("the log messages the client got: %s", logged)
	}
	if !strings.Contains(stderr, "the HTTP tool server's own stream is open") {
		t.Errorf("the stream's opening is not logged; stderr:\n%s", stderr)
	}
	m.checkRecords(t)
}
