package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
)

// showExamples prints every warning and problem each command gives on each
// example, to review whether each is real.
var showExamples = flag.Bool("show-examples", false, "log every warning and problem of the examples' commands")

// settingsExample is one example settings file of the repository, as
// written: a file, a block of a Markdown file, the settings a chart's
// values or a rendered ConfigMap hold.
type settingsExample struct {
	name string         // where it is
	yaml bool           // written in YAML (kept so in the test's folder)
	obj  map[string]any // its members
}

// exampleCommands are the commands that read a settings file and report or
// make something without serving the protocol: each must accept every
// form the README documents.
var exampleCommands = []string{"check", "keys", "tools", "report", "compare", "approve", "page"}

// exampleSpec is what the table expects of one example: the warnings and
// problems that are real for it (each line a command prints at those
// levels must hold one of them), and whether, its keys made and its slip
// signed, check finds it sound.
type exampleSpec struct {
	real  []string
	sound bool // ready: check exits 0 and says all well
	// listed: ready, tools starts and lists every server (none is a
	// remote HTTP server this machine cannot reach).
	listed bool
}

// Real on every example as written, before keys, slip and book exist:
// what the next steps of the first setup put right.
var realBeforeSetUp = []string{
	"problem: agent keys (agent.keys", // not there yet: keys makes them
	"problem: executor keys (executor.keys",
	"problem: slip (agent.slip",                    // the person has not signed it yet
	"problem: trusted passkeys (agent.issuerKeys)", // left out until the page step
	"mcp-executor report: no copy at",              // no start yet
	"compare: FAIL nothing is recorded yet",
	"mcp-executor compare: nothing is recorded yet",
	"mcp-executor keys: the permission's parts are not all known yet", // follows a problem listed beside it
}

// examples is the table: every example settings file the repository holds
// (TestExampleSettings fails on one it does not name, and on a name here
// that is gone).
var examples = map[string]exampleSpec{
	"sidecar/settings/testdata/minimal.json": {real: []string{
		// The bare "server": a program looked up in the executor's own PATH, and not found there.
		"warning: settings (server.command): a bare name is looked up in the executor's own PATH",
		`problem: tool server (server.command): tool server command "server" not found in the executor's PATH`,
		"error: the tool server could not be listed",
	}},
	"sidecar/settings/testdata/executor.example.json": {real: []string{
		// It names Vault (a CA file not here), Kubernetes (no cluster), /usr/local/bin/node and files not here.
		"problem: key store", "problem: copy key", "problem: copy (executor.copy", "problem: content rules",
		"problem: tool server (server.command)", "problem: tool server (server.cwd)",
		"problem: credential FILES_API_TOKEN", "problem: credential FILES_DB_PASSWORD", "problem: credential FILES_S3_KEY",
		"mcp-executor keys: executor keys", "mcp-executor keys: reading content rules", "mcp-executor keys: copy key",
		"error: the tool server could not be listed",
		"mcp-executor page:", // the page reads the settings' content rules too
	}},
	"sidecar/settings/testdata/servers.example.json": {real: []string{
		"the HTTP tool server could not be reached", // tools.example is an illustration
		// fs is /usr/local/bin/node, not on every machine; web's token is a file not made here.
		"problem: tool server fs (servers.fs.command)", "problem: header Authorization (servers.web.headers.Authorization)",
		"error: tool server fs could not be listed", "error: tool server web could not be listed",
	}},
	"sidecar/settings/testdata/servers.example.yaml": {real: []string{
		"the HTTP tool server could not be reached", // tools.example is an illustration
		"problem: tool server fs (servers.fs.command)", "problem: header Authorization (servers.web.headers.Authorization)",
		"error: tool server fs could not be listed", "error: tool server web could not be listed",
	}},
	"README.md: First setup (executor.json)": {sound: true, listed: true, real: []string{
		// As written, before step 1's npm install: the server's program is not there.
		"error: the tool server could not be listed: initialize: the server's output ended: the server ended (exit code 1); the end of its standard error: Error: Cannot find module",
	}},
	"README.md: Settings reference": {real: []string{
		// /usr/local/bin/files-server and the folders and files it names are an illustration.
		"problem: tool server (server.command)", "problem: tool server (server.cwd)", "problem: credential FILES_TOKEN",
		"problem: content rules", "error: the tool server could not be listed", "mcp-executor keys: reading content rules",
		"mcp-executor page:",
	}},
	"README.md: Several tool servers, rules by pattern, quotas and redaction (json)": {sound: true, real: []string{
		"problem: header Authorization (servers.web.headers.Authorization)",
		"error: tool server fs could not be listed: initialize: the server's output ended: the server ended (exit code 1); the end of its standard error: Error: Cannot find module",
		"the HTTP tool server could not be reached",  // the token is made only for the ready folder
		"error: tool server web could not be listed", // https://tools.internal is an illustration
	}},
	"README.md: Several tool servers, rules by pattern, quotas and redaction (yaml)": {sound: true, real: []string{
		"problem: header Authorization (servers.web.headers.Authorization)",
		"error: tool server fs could not be listed: initialize: the server's output ended: the server ended (exit code 1); the end of its standard error: Error: Cannot find module",
		"the HTTP tool server could not be reached",
		"error: tool server web could not be listed",
	}},
	"deploy/mcp-executor.yaml: ConfigMap executor.json": {real: []string{
		// Keys in Vault at vault.vault.svc, reached from a pod only; the tool server is the image's.
		"problem: vault", "problem: agent keys (agent.keys)", "problem: executor keys (executor.keys)", "problem: copy key",
		"problem: copy (executor.copy", "problem: book (agent.book", "problem: tool server (server.command)",
		"problem: credential TOOL_API_TOKEN", "mcp-executor keys:", "error: the tool server could not be listed",
		"mcp-executor report: the copy key", "mcp-executor approve:", "problem: slip (agent.slip",
	}},
	"deploy/values-example.yaml: executor.settings, as the chart renders them": {real: []string{
		"problem: vault",
		"problem: agent keys (agent.keys)", "problem: executor keys (executor.keys)", "problem: copy key",
		"problem: copy (executor.copy", "problem: book (agent.book", "problem: tool server (server.command)",
		"problem: credential TOOL_API_TOKEN", "mcp-executor keys:", "error: the tool server could not be listed",
		"mcp-executor report: the copy key", "problem: slip (agent.slip",
	}},
	"charts/mcp-executor/values.yaml: executor.settings, as the chart renders them": {real: []string{
		// The chart's defaults are a form to fill in: issuerKeys [] stops the settings, as it says.
		"agent.issuerKeys: an empty list trusts no passkey",
	}},
}

// TestExampleSettings runs every command that reads settings on every
// example settings file of the repository, through the binary, in a folder
// of its own: as written, and, where the keys are files, once the keys are
// made and a slip is signed (a development passkey's) and trusted. Each
// exits as the README says; no warning or problem is printed that is not
// real for that example (the table says which are, and why); no secret
// the test put in a credential is ever printed; a --json output is one
// JSON object. The examples whose table entry says so are sound once set
// up, with no warning at all.
func TestExampleSettings(t *testing.T) {
	found := findExamples(t)
	var names []string
	for _, ex := range found {
		names = append(names, ex.name)
		if _, ok := examples[ex.name]; !ok {
			t.Errorf("an example settings file the table does not name: %s (add it, with what is real for it)", ex.name)
		}
	}
	for name := range examples {
		if !slices.Contains(names, name) {
			t.Errorf("the table names %s, which is no longer found", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, ex := range found {
		t.Run(strings.NewReplacer("/", "_", " ", "_").Replace(ex.name), func(t *testing.T) {
			t.Parallel()
			spec := examples[ex.name]
			dir := t.TempDir()
			path := writeExample(t, ex, dir)
			written := map[string]commandResult{}
			for _, c := range exampleCommands {
				written[c] = runOnExample(t, spec, "as written", c, path, dir)
			}
			// As written nothing is set up: check, report and compare find
			// what is missing; nothing waits for approval. A settings file
			// that does not read fails every command.
			reads := strings.Contains(written["check"].out, "ok:      settings (")
			for c, want := range map[string]int{"check": 1, "report": 1, "compare": 1, "approve": 0} {
				if !reads {
					want = 1
				}
				if got := written[c].code; got != want {
					t.Errorf("as written, %s exits %d, want %d:\n%s\n%s", c, got, want, written[c].out, written[c].errOut)
				}
			}
			if !readyFolder(t, ex, path, dir) {
				return
			}
			for _, c := range exampleCommands {
				res := runOnExample(t, spec, "set up", c, path, dir)
				want := map[string]int{"keys": 0, "approve": 0, "page": 0, "report": 1, "compare": 1}
				if spec.sound {
					want["check"] = 0
				}
				if spec.listed {
					want["tools"] = 0
				}
				if w, ok := want[c]; ok && res.code != w {
					t.Errorf("set up, %s exits %d, want %d:\n%s\n%s", c, res.code, w, res.out, res.errOut)
				}
				if c == "check" && spec.sound && !strings.Contains(res.out, "check: all well (0 warnings)") {
					t.Errorf("set up, check should be all well with no warning:\n%s", res.out)
				}
			}
		})
	}
}

// exampleSecret is the value of every credential file the set-up folder
// holds: it must never be printed.
const exampleSecret = "sk-example-0f9e8d7c6b5a4f3e2d1c"

type commandResult struct {
	code        int
	out, errOut string
}

// runOnExample runs one command on the example and holds its exit code
// and its lines to the rules.
func runOnExample(t *testing.T, spec exampleSpec, state, command, path, dir string) commandResult {
	t.Helper()
	var res commandResult
	if command == "page" {
		res = runPage(t, path, dir)
	} else {
		args := []string{command, "--config", path}
		res.code, res.out, res.errOut = runBin(t, dir, args...)
	}
	where := state + ", " + command
	if res.code != 0 && res.code != 1 {
		t.Errorf("%s: exit %d, where the README documents 0 or 1:\n%s\n%s", where, res.code, res.out, res.errOut)
	}
	for _, s := range []string{res.out, res.errOut} {
		if strings.Contains(s, exampleSecret) {
			t.Errorf("%s: a credential's value is printed:\n%s", where, s)
		}
		if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
			t.Errorf("%s: a crash:\n%s", where, s)
		}
	}
	allowed := append(slices.Clone(spec.real), realBeforeSetUp...)
	for _, l := range findingLines(res.out + "\n" + res.errOut) {
		if *showExamples {
			t.Logf("%s: %s", where, l)
		}
		if !slices.ContainsFunc(allowed, func(r string) bool { return strings.Contains(l, r) }) {
			t.Errorf("%s: a warning or problem the table does not hold for real here:\n%s", where, l)
		}
	}
	if command != "page" && command != "keys" {
		if code, out, errOut := runBin(t, dir, command, "--config", path, "--json"); code != res.code {
			t.Errorf("%s --json exits %d, without --json %d:\n%s", where, code, res.code, errOut)
		} else if json.Valid([]byte(out)) != (strings.HasPrefix(strings.TrimSpace(out), "{")) || (code == 0 && !json.Valid([]byte(out))) {
			t.Errorf("%s --json: not one JSON object:\n%s", where, out)
		}
	}
	return res
}

// findingLines are the lines of a command's output that are a warning, a
// problem or an error: check's and tools' levels, the commands' own error
// lines, and log lines at WARN or ERROR.
func findingLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "warning:"), strings.HasPrefix(l, "problem:"), strings.HasPrefix(l, "error:"),
			strings.HasPrefix(l, "mcp-executor ") && strings.Contains(l, ": ") && !strings.HasPrefix(l, "mcp-executor page: open ") &&
				!strings.HasPrefix(l, "mcp-executor page: registration code "),
			strings.HasPrefix(l, "compare: FAIL"),
			strings.Contains(l, `"level":"WARN"`), strings.Contains(l, `"level":"ERROR"`):
			out = append(out, l)
		}
	}
	return out
}

// runPage starts the page on a free loopback port, asks for it as a
// browser would, and stops it as Ctrl-C does: 0 when it served and
// stopped, 1 when it did not start.
func runPage(t *testing.T, path, dir string) commandResult {
	t.Helper()
	cmd := exec.Command(executorBin, "page", "--config", path, "--listen", "127.0.0.1:0")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stderr)
	var seen strings.Builder
	origin := ""
	for origin == "" {
		line, err := br.ReadString('\n')
		seen.WriteString(line)
		if m := regexp.MustCompile(`open (http://localhost:\d+) in the browser`).FindStringSubmatch(line); m != nil {
			origin = m[1]
		}
		if err != nil {
			break
		}
	}
	if origin != "" {
		req, err := http.NewRequest(http.MethodGet, strings.Replace(origin, "localhost", "127.0.0.1", 1)+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = strings.TrimPrefix(origin, "http://")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Errorf("page: %v", err)
		} else {
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("page: GET / answered %s", resp.Status)
			}
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
	}
	rest, _ := io.ReadAll(br)
	seen.Write(rest)
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	if origin == "" && code == 0 {
		t.Errorf("page exited 0 without serving:\n%s", seen.String())
	}
	return commandResult{code: code, out: out.String(), errOut: seen.String()}
}

// writeExample writes the example into dir as executor.json or
// executor.yaml. Absolute paths the commands may write (the slip, the book,
// the keys, the copy and its key, the approval queue) are moved under dir,
// so that nothing is written outside the test's folder; what is only read
// (a server's program, a CA file) stays as written.
func writeExample(t *testing.T, ex settingsExample, dir string) string {
	t.Helper()
	obj := deepCopy(t, ex.obj)
	rebase := func(parent map[string]any, key string) {
		switch v := parent[key].(type) {
		case string:
			if filepath.IsAbs(v) {
				parent[key] = filepath.Join(dir, "root", v)
			}
		case map[string]any:
			for k := range v {
				if s, ok := v[k].(string); ok && filepath.IsAbs(s) {
					v[k] = filepath.Join(dir, "root", s)
				}
			}
		}
	}
	for part, members := range map[string][]string{"agent": {"slip", "book", "keys"}, "executor": {"keys", "copy", "copyKey"}, "approvals": {"queue"}} {
		if m, ok := obj[part].(map[string]any); ok {
			for _, k := range members {
				rebase(m, k)
			}
		}
	}
	return saveExample(t, obj, ex.yaml, dir)
}

func saveExample(t *testing.T, obj map[string]any, asYAML bool, dir string) string {
	t.Helper()
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	name := "executor.json"
	if asYAML {
		if out, err = yaml.JSONToYAML(out); err != nil {
			t.Fatal(err)
		}
		name = "executor.yaml"
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readyFolder sets the example's folder up as the first setup would, where
// its keys and copy key are files: the filesystem server of testdata/npm
// and its data folder, every credential file holding exampleSecret, the
// keys made by `keys`, a slip the development passkey signs for the
// actions the rules name (the person's choice), trusted in
// agent.issuerKeys. It reports whether it could.
func readyFolder(t *testing.T, ex settingsExample, path, dir string) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if ex.yaml {
		if raw, err = yaml.YAMLToJSON(raw); err != nil {
			t.Fatal(err)
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	agent, _ := obj["agent"].(map[string]any)
	executor, _ := obj["executor"].(map[string]any)
	for _, src := range []any{agent["keys"], executor["keys"], executor["copyKey"]} {
		if s, ok := src.(string); !ok || strings.Contains(s, ":") {
			return false // in a store this machine has not
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "content-rules.json")); obj["contentRules"] != nil && err != nil {
		return false
	}
	modules, err := filepath.Abs("../../testdata/npm/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, file := range credentialFiles(obj) {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if !strings.HasPrefix(p, dir) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("Bearer "+exampleSecret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A slip folder the settings name must be there for the slip.
	slipPath, _ := agent["slip"].(string)
	if !filepath.IsAbs(slipPath) {
		slipPath = filepath.Join(dir, slipPath)
	}
	if err := os.MkdirAll(filepath.Dir(slipPath), 0o700); err != nil {
		t.Fatal(err)
	}
	// Trust a development passkey, then make the keys and sign.
	pk, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	agent["issuerKeys"] = []any{pk.Key().Thumbprint}
	path = saveExample(t, obj, ex.yaml, dir)
	if code, out, errOut := runBin(t, dir, "keys", "--config", path); code != 0 {
		t.Logf("set up: keys exits %d, so the folder is not set up further:\n%s\n%s", code, out, errOut)
		return false
	}
	ctx := context.Background()
	load := func(src any) jwk.Signer {
		spec, _ := src.(string) // a file: readyFolder returned before otherwise
		s, err := keys.LoadKeySet(ctx, keys.KeySetSpec{Source: spec}, dir, keys.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	e := &devsetup.Env{Dir: dir, SlipPath: slipPath, Passkey: pk, Agent: load(agent["keys"]), Executor: load(executor["keys"])}
	service, _ := obj["service"].(string)
	if service == "" {
		service = "executor"
	}
	actions := allowedActions(obj)
	if len(actions) == 0 {
		actions = []string{"provared.data.read"} // a slip allows at least one action
	}
	if _, err := devsetup.WriteSlip(e, devsetup.Options{Actions: actions}, service); err != nil {
		t.Fatal(err)
	}
	return true
}

// credentialFiles are the files a stdio server's environment and an HTTP
// server's headers are read from.
func credentialFiles(obj map[string]any) []string {
	var servers []map[string]any
	if s, ok := obj["server"].(map[string]any); ok {
		servers = append(servers, s)
	}
	if many, ok := obj["servers"].(map[string]any); ok {
		for _, s := range many {
			if m, ok := s.(map[string]any); ok {
				servers = append(servers, m)
			}
		}
	}
	var out []string
	for _, s := range servers {
		for _, member := range []string{"env", "headers"} {
			vars, _ := s[member].(map[string]any)
			for _, v := range vars {
				switch v := v.(type) {
				case string:
					if !strings.Contains(v, ":") || strings.HasPrefix(v, "./") {
						out = append(out, v)
					}
				case map[string]any:
					if f, ok := v["file"].(string); ok {
						out = append(out, f)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// allowedActions are the actions the rules name (not those that refuse):
// what a person who agrees with the settings allows.
func allowedActions(obj map[string]any) []string {
	tools, _ := obj["tools"].(map[string]any)
	var out []string
	for _, r := range tools {
		rule, _ := r.(map[string]any)
		if a, ok := rule["action"].(string); ok && rule["refuse"] != true && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// findExamples finds every example settings file of the repository: files
// whose content is settings (JSON or YAML), the settings a chart's values
// name (executor.settings), a rendered ConfigMap's executor.json, and the
// fenced blocks of the Markdown files that are whole settings. Fragments
// (a "tools" member alone) are not settings and are not found.
func findExamples(t *testing.T) []settingsExample {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out []settingsExample
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "provared-vectors", "templates":
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch ext := filepath.Ext(p); ext {
		case ".json", ".yaml", ".yml":
			isYAML := ext != ".json"
			for _, doc := range documents(data, isYAML) {
				obj := parseObject(doc, isYAML)
				switch {
				case isSettings(obj):
					out = append(out, settingsExample{name: rel, yaml: isYAML, obj: obj})
				case isSettings(nested(obj, "executor", "settings")):
					out = append(out, settingsExample{name: rel + ": executor.settings, as the chart renders them", yaml: isYAML, obj: chartSettings(t, root, obj)})
				case obj["kind"] == "ConfigMap":
					if text, ok := nested(obj, "data")["executor.json"].(string); ok {
						if s := parseObject([]byte(text), false); isSettings(s) {
							out = append(out, settingsExample{name: fmt.Sprintf("%s: ConfigMap executor.json", rel), obj: s})
						}
					}
				}
			}
		case ".md":
			out = append(out, markdownExamples(rel, data)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// markdownExamples are the fenced json and yaml blocks of a Markdown file
// that are whole settings, named by the heading they are under (and the
// file a first-setup marker writes, or the form when a heading has both).
func markdownExamples(rel string, data []byte) []settingsExample {
	var out []settingsExample
	heading, marker := "", ""
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(l, "#"))
			continue
		case strings.HasPrefix(l, "<!--"):
			marker = l
			continue
		case !strings.HasPrefix(l, "```json") && !strings.HasPrefix(l, "```yaml"):
			continue
		}
		isYAML := strings.HasPrefix(l, "```yaml")
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		text := []byte(strings.Join(body, "\n"))
		// A README block may name the person's passkey by its placeholder.
		text = bytes.ReplaceAll(text, []byte("<thumbprint>"), []byte("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"))
		obj := parseObject(text, isYAML)
		if !isSettings(obj) {
			marker = ""
			continue
		}
		name := rel + ": " + heading
		switch {
		case strings.Contains(marker, "first-setup: file "):
			name += " (" + strings.Fields(strings.SplitN(marker, "first-setup: file ", 2)[1])[0] + ")"
		case strings.Contains(marker, "several-servers: "):
			name += " (" + strings.Fields(strings.SplitN(marker, "several-servers: ", 2)[1])[0] + ")"
		}
		out = append(out, settingsExample{name: name, yaml: isYAML, obj: obj})
		marker = ""
	}
	return out
}

// documents splits a YAML stream into its documents.
func documents(data []byte, isYAML bool) [][]byte {
	if !isYAML {
		return [][]byte{data}
	}
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		out = append(out, []byte(d))
	}
	return out
}

func parseObject(data []byte, isYAML bool) map[string]any {
	if isYAML {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil
		}
		data = j
	}
	var obj map[string]any
	if json.Unmarshal(data, &obj) != nil {
		return nil
	}
	return obj
}

// isSettings reports settings: a name, a tool server, the agent, the
// executor and the tools.
func isSettings(obj map[string]any) bool {
	if obj == nil {
		return false
	}
	for _, m := range []string{"name", "agent", "executor", "tools"} {
		if _, ok := obj[m]; !ok {
			return false
		}
	}
	_, one := obj["server"]
	_, many := obj["servers"]
	return one || many
}

func nested(obj map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, ok := obj[p].(map[string]any)
		if !ok {
			return nil
		}
		obj = next
	}
	return obj
}

func deepCopy(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// chartSettings are the settings the chart renders from values (over the
// chart's own defaults), as its "mcp-executor.settings" helper does: the
// vault block for keys.source vault, kubernetes for secrets, and the
// approval queue on the state volume. (The deploy tests render the chart
// itself and check deploy/mcp-executor.yaml is what it renders.)
func chartSettings(t *testing.T, root string, values map[string]any) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "charts", "mcp-executor", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	v := parseObject(raw, true)
	mergeValues(v, deepCopy(t, values))
	s := deepCopy(t, nested(v, "executor", "settings"))
	switch nested(v, "keys")["source"] {
	case "vault":
		kv := nested(v, "keys", "vault")
		s["vault"] = map[string]any{"address": kv["address"], "auth": map[string]any{"kubernetes": map[string]any{
			"role": kv["role"], "mount": kv["authMount"], "tokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}}}
	case "secrets":
		s["kubernetes"] = map[string]any{}
	}
	a, _ := s["approvals"].(map[string]any)
	if a == nil {
		a = map[string]any{}
	}
	if _, ok := a["queue"]; !ok {
		a["queue"] = "/var/lib/mcp-executor/approvals"
	}
	s["approvals"] = a
	return s
}

// mergeValues merges values over the chart's defaults as Helm does: maps
// member by member, anything else replaced.
func mergeValues(into, over map[string]any) {
	for k, v := range over {
		if sub, ok := v.(map[string]any); ok {
			if there, ok := into[k].(map[string]any); ok {
				mergeValues(there, sub)
				continue
			}
		}
		into[k] = v
	}
}
