package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/chromiumtest"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// The README's first setup is marked, block by block, with HTML comments
// the reader does not see:
//
//	<!-- first-setup: run … -->     a sh block the test runs as written (npm install aside)
//	<!-- first-setup: output -->    the stdout the run before it must print
//	<!-- first-setup: file NAME --> a file the test writes as written
//	<!-- first-setup: merge NAME --> members to put into the JSON file NAME
//	<!-- first-setup: page … -->    the page command: the test starts it and plays the person
//	<!-- first-setup: client -->    an MCP client's configuration: the test connects with it
//
// A run's output is compared after the values that differ from run to run
// (the folder, keys, fingerprints, times, milliseconds) are put back to
// the names the README shows in angle brackets.
const readmePath = "../../README.md"

// updateREADME rewrites the README's output blocks with what the commands
// print (normalized), for a change that meant to change them.
var updateREADME = flag.Bool("update-readme", false, "rewrite the README's first-setup outputs with what the commands print")

// readmeStep is one marked block of the README.
type readmeStep struct {
	kind, arg string // the marker's word and the rest of it
	body      string // the fenced block's text
	line      int    // the marker's line, for messages
}

// readmeSteps reads the marked blocks of the README's first setup, in order.
func readmeSteps(t *testing.T) []readmeStep { return readmeBlocks(t, "first-setup") }

// readmeBlocks reads the README's blocks marked <!-- PREFIX: kind [arg] [(a note)] -->, in order.
func readmeBlocks(t *testing.T, prefix string) []readmeStep {
	t.Helper()
	markerRE := regexp.MustCompile(`^<!-- ` + regexp.QuoteMeta(prefix) + `: ([a-z]+)(?: ([^()]*?))?\s*(?:\(.*\))?\s*-->$`)
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var steps []readmeStep
	for i := 0; i < len(lines); i++ {
		m := markerRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			if strings.Contains(lines[i], prefix+":") {
				t.Fatalf("README line %d: a %s marker this test does not read: %s", i+1, prefix, lines[i])
			}
			continue
		}
		st := readmeStep{kind: m[1], arg: strings.TrimSpace(m[2]), line: i + 1}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(lines[j], "```") {
			t.Fatalf("README line %d: the marker is not followed by a fenced block", i+1)
		}
		var body []string
		for j++; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			body = append(body, lines[j])
		}
		st.body = strings.Join(body, "\n")
		steps = append(steps, st)
		i = j
	}
	if len(steps) == 0 {
		t.Fatalf("the README marks no %s block", prefix)
	}
	return steps
}

// firstSetup is the state of a run of the README's first setup.
type firstSetup struct {
	t       *testing.T
	home    string // $HOME, shown as /home/you
	dir     string // ~/files-agent
	env     []string
	known   []string // pairs: a value and the name the README shows for it
	lastOut string
	ran     bool           // a run since the last output
	keysOut string         // what keys --json printed
	outputs map[int]string // README line of an output marker -> what was printed, normalized
}

// TestREADMEFirstSetup follows the README's first setup command by command,
// in a fresh $HOME, with the binary built here as mcp-executor on the PATH
// and the filesystem server of testdata/npm in place of `npm install`: the
// page step is played by headless Chromium with a virtual passkey (a real
// browser and a real registration, the person's choices as the README
// gives them), the client's configuration is used to connect with the
// go-sdk client, and every output the README shows is compared with what
// the commands print.
func TestREADMEFirstSetup(t *testing.T) {
	modules, err := filepath.Abs("../../testdata/npm/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "server-filesystem")); err != nil {
		t.Fatalf("the first setup needs the npm test servers: run `npm ci --prefix testdata/npm` (%v)", err)
	}
	home := t.TempDir()
	f := &firstSetup{t: t, home: home, dir: filepath.Join(home, "files-agent"),
		env: append(os.Environ(), "HOME="+home, "PATH="+filepath.Dir(executorBin)+string(os.PathListSeparator)+os.Getenv("PATH"))}
	f.known = append(f.known, home, "/home/you")
	// check names the node the settings' path finds first; the README
	// shows Debian's.
	for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/opt/homebrew/bin"} {
		if node := filepath.Join(dir, "node"); isExecutable(node) {
			f.known = append(f.known, "found: "+node, "found: /usr/bin/node")
			break
		}
	}
	f.outputs = map[int]string{}
	for _, st := range readmeSteps(t) {
		switch st.kind {
		case "run":
			f.run(st, modules)
		case "output":
			f.output(st)
		case "file":
			f.writeFile(st)
		case "merge":
			f.merge(st)
		case "page":
			f.page(st)
		case "client":
			f.client(st)
		default:
			t.Fatalf("README line %d: unknown step %q", st.line, st.kind)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	if *updateREADME {
		rewriteOutputs(t, f.outputs)
	}
}

// rewriteOutputs puts each output into the fenced block after its marker.
func rewriteOutputs(t *testing.T, outputs map[int]string) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		got, ok := outputs[i+1]
		if !ok {
			continue
		}
		j := i + 1
		for ; !strings.HasPrefix(lines[j], "```"); j++ {
			out = append(out, lines[j])
		}
		out = append(out, lines[j], got)
		for j++; !strings.HasPrefix(lines[j], "```"); j++ {
		}
		out = append(out, lines[j])
		i = j
	}
	if err := os.WriteFile(readmePath, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs a sh block in ~/files-agent (in $HOME before it is made),
// every line but npm's, and keeps its stdout. Placeholders in it are
// replaced by the values they stand for.
func (f *firstSetup) run(st readmeStep, modules string) {
	t := f.t
	var script []string
	for _, line := range strings.Split(st.body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "npm install ") {
			want := "@modelcontextprotocol/server-filesystem@" + npmPinned(t, "@modelcontextprotocol/server-filesystem")
			if !strings.Contains(line, want) {
				t.Errorf("README line %d installs %q; testdata/npm pins %s", st.line, line, want)
			}
			line = "ln -s " + shellQuote(modules) + " node_modules"
		}
		script = append(script, f.unplaceholder(line))
	}
	cwd := f.dir
	if _, err := os.Stat(cwd); err != nil {
		cwd = f.home
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = cwd, f.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("README line %d: %v\n%s\nstdout:\n%s\nstderr:\n%s", st.line, err, strings.Join(script, "\n"), out, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
			t.Errorf("README line %d: a warning in the log of a setup that is sound: %s", st.line, l)
		}
	}
	f.lastOut, f.ran = string(out), true
	if strings.Contains(st.body, "keys --config") && strings.Contains(st.body, "--json") {
		f.learnKeys(string(out))
	}
}

// output compares the last run's stdout with the README's block.
func (f *firstSetup) output(st readmeStep) {
	t := f.t
	if !f.ran {
		t.Fatalf("README line %d: an output with no run before it", st.line)
	}
	f.ran = false
	got := f.normalize(f.lastOut)
	f.outputs[st.line] = got
	if want := trimLines(st.body); got != want && !*updateREADME {
		t.Errorf("README line %d: the output differs; the commands printed (normalized):\n%s\n--- the README shows:\n%s", st.line, got, want)
	}
}

func (f *firstSetup) writeFile(st readmeStep) {
	if err := os.WriteFile(filepath.Join(f.dir, st.arg), []byte(f.unplaceholder(st.body)+"\n"), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// merge puts the block's members into the JSON file: an object's members
// into the object there, anything else in place of what is there.
func (f *firstSetup) merge(st readmeStep) {
	t := f.t
	path := filepath.Join(f.dir, st.arg)
	var into, add map[string]any
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := json.Unmarshal([]byte("{"+f.unplaceholder(st.body)+"}"), &add); err != nil {
		t.Fatalf("README line %d: the members to merge are not JSON: %v", st.line, err)
	}
	mergeInto(into, add)
	out, err := json.MarshalIndent(into, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mergeInto(into, add map[string]any) {
	for k, v := range add {
		sub, isObj := v.(map[string]any)
		there, wasObj := into[k].(map[string]any)
		if isObj && wasObj && len(there) > 0 && len(sub) > 0 {
			mergeInto(there, sub)
			continue
		}
		into[k] = v
	}
}

// page starts the page as the README says (on a free port) and plays the
// person in headless Chromium: register a passkey, sign a slip from what
// keys --json printed with the README's choices, read the thumbprint.
func (f *firstSetup) page(st readmeStep) {
	t := f.t
	cmdLine := strings.TrimSpace(st.body)
	if !strings.HasPrefix(cmdLine, "mcp-executor page ") || strings.Contains(cmdLine, "\n") {
		t.Fatalf("README line %d: the page step is not one mcp-executor page command: %q", st.line, cmdLine)
	}
	cmd := exec.Command("sh", "-c", "exec "+cmdLine+" --listen 127.0.0.1:0")
	cmd.Dir, cmd.Env = f.dir, f.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	origin, code, rest := pageOrigin(t, stderr)
	if code == "" {
		t.Fatal("the page printed no registration code before it said where to open it")
	}
	ctx := chromiumtest.Browser(t)
	const limit = time.Minute
	chromiumtest.Step(t, ctx, limit, "opening the page", chromedp.Navigate(origin+"/"), chromedp.WaitVisible(chromedp.ID("register")))
	chromiumtest.Step(t, ctx, limit, "entering the registration code", chromedp.SetValue(chromedp.ID("register-code"), code))
	chromiumtest.Step(t, ctx, limit, "registering a passkey", chromedp.Click(chromedp.ID("register")), chromedp.WaitVisible(chromedp.ID("passkey-info")))
	thumbprint := chromiumtest.Text(t, ctx, limit, "#thumbprint")
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`).MatchString(thumbprint) {
		t.Fatalf("the page shows the thumbprint %q", thumbprint)
	}
	chromiumtest.Step(t, ctx, limit, "filling in the slip",
		chromedp.Click(chromedp.CSS("#slip-form-box summary")),
		chromedp.WaitVisible(chromedp.ID("permission")),
		chromedp.SetValue(chromedp.ID("permission"), f.keysJSON()),
		chromedp.SetValue(chromedp.ID("issuer-name"), "Sam Example"),
		chromedp.SetValue(chromedp.ID("agent-name"), "files agent"),
		chromedp.SetValue(chromedp.ID("actions"), "provared.data.read"),
		chromedp.SetValue(chromedp.ID("purpose"), "Read the files in ~/files-agent/data."),
		chromedp.Click(chromedp.ID("review")),
		chromedp.WaitVisible(chromedp.ID("slip-review-box")))
	chromiumtest.Step(t, ctx, limit, "signing the slip", chromedp.Click(chromedp.ID("sign-slip")), chromedp.WaitVisible(chromedp.ID("slip-info")))
	slipFP := chromiumtest.Text(t, ctx, limit, "#slip-fingerprint")
	if _, err := os.Stat(filepath.Join(f.dir, "slip.json")); err != nil {
		t.Fatalf("the page did not save slip.json: %v", err)
	}
	f.known = append(f.known, thumbprint, "<thumbprint>", slipFP, "<slip>")
	// Ctrl-C.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	tail, _ := io.ReadAll(rest)
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Fatalf("the page after Ctrl-C: %v\n%s", err, tail)
	}
}

// pageOrigin reads the page's stderr up to its "open … in the browser"
// line and returns the origin it names, the registration code it printed
// before ("" when none), and the rest of its stderr.
func pageOrigin(t *testing.T, stderr io.Reader) (string, string, io.Reader) {
	t.Helper()
	found := make(chan string, 1)
	br := bufio.NewReader(stderr)
	var code string
	saysCode := regexp.MustCompile(`^mcp-executor page: registration code ([A-Z2-7]{4}(?:-[A-Z2-7]{4}){7})$`)
	go func() {
		for {
			line, err := br.ReadString('\n')
			if m := saysCode.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil {
				code = m[1]
			}
			if m := regexp.MustCompile(`^mcp-executor page: open (http://localhost:\d+) in the browser that holds your passkey`).FindStringSubmatch(line); m != nil {
				found <- m[1]
				return
			}
			if err != nil {
				close(found)
				return
			}
		}
	}()
	select {
	case origin, ok := <-found:
		if !ok {
			t.Fatal("the page ended before it said where to open it")
		}
		return origin, code, br
	case <-time.After(time.Minute):
		t.Fatal("the page did not say where to open it within a minute")
	}
	return "", "", nil
}

// client connects with the README's client configuration (its command and
// arguments, the folder put back) and lists the tools the agent sees.
func (f *firstSetup) client(st readmeStep) {
	t := f.t
	var conf struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(st.body), &conf); err != nil || len(conf.MCPServers) != 1 {
		t.Fatalf("README line %d: not a client configuration of one server: %v", st.line, err)
	}
	// The one server the configuration names.
	for _, srv := range conf.MCPServers {
		f.listAs(srv.Command, srv.Args)
	}
}

// listAs starts the executor as the client configuration's command and
// arguments say and lists the tools the agent sees.
func (f *firstSetup) listAs(command string, srvArgs []string) {
	t := f.t
	args := make([]string, len(srvArgs))
	for i, a := range srvArgs {
		args[i] = strings.ReplaceAll(a, "/home/you", f.home)
	}
	if command != "mcp-executor" {
		t.Fatalf("the client starts %q", command)
	}
	cmd := exec.Command(executorBin, args...)
	cmd.Env = f.env
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme-client", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting as the README's client: %v", err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, ", "); got != "list_directory, read_text_file, write_file" {
		t.Errorf("the agent sees the tools %s; the README says list_directory, read_text_file and write_file", got)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
}

// learnKeys takes the public keys keys --json printed, to show them by name.
func (f *firstSetup) learnKeys(out string) {
	t := f.t
	var perm struct {
		Agent struct {
			Keys []map[string]any `json:"keys"`
		} `json:"agent"`
		With struct {
			Keys []map[string]any `json:"keys"`
		} `json:"with"`
	}
	if err := json.Unmarshal([]byte(out), &perm); err != nil {
		t.Fatalf("keys --json: %v\n%s", err, out)
	}
	for _, ks := range []struct {
		who  string
		keys []map[string]any
	}{{"agent", perm.Agent.Keys}, {"executor", perm.With.Keys}} {
		list := make([]any, len(ks.keys))
		for i, k := range ks.keys {
			list[i] = k
			for member, name := range map[string]string{"x": "Ed25519", "pub": "ML-DSA-87"} {
				if v, ok := k[member].(string); ok {
					f.known = append(f.known, v, "<"+ks.who+" "+name+" public key>")
				}
			}
		}
		set, err := jwk.CheckKeySet(list)
		if err != nil {
			t.Fatalf("keys --json: the %s keys: %v", ks.who, err)
		}
		f.known = append(f.known, set.Fingerprint(), "<"+ks.who+" keys>")
	}
	f.keysOut = out
}

// keysJSON is what keys --json printed, which the person pastes.
func (f *firstSetup) keysJSON() string {
	if f.keysOut == "" {
		f.t.Fatal("the page step comes before keys --json")
	}
	return f.keysOut
}

var (
	timeRE        = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z`)
	fingerprintRE = regexp.MustCompile(`\b[A-Za-z0-9_-]{43}\b`)
	msRE          = regexp.MustCompile(`\d+/\d+/\d+ \(\d+/\d+/\d+\)$`)
)

// normalize puts the names the README shows in place of the values that
// differ from run to run.
func (f *firstSetup) normalize(out string) string {
	for i := 0; i+1 < len(f.known); i += 2 {
		out = strings.ReplaceAll(out, f.known[i], f.known[i+1])
	}
	out = timeRE.ReplaceAllString(out, "<time>")
	out = fingerprintRE.ReplaceAllString(out, "<fingerprint>")
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = msRE.ReplaceAllString(strings.TrimRight(l, " "), "<ms> (<ms held>)")
	}
	return trimLines(strings.Join(lines, "\n"))
}

// unplaceholder puts the values back in place of the names a command or
// a file of the README holds (the thumbprint, the folder).
func (f *firstSetup) unplaceholder(s string) string {
	for i := 0; i+1 < len(f.known); i += 2 {
		s = strings.ReplaceAll(s, f.known[i+1], f.known[i])
	}
	return s
}

func trimLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// npmPinned is the version testdata/npm's package.json pins for name.
func npmPinned(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/npm/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	v, ok := pkg.Dependencies[name]
	if !ok {
		t.Fatalf("testdata/npm pins no %s", name)
	}
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
