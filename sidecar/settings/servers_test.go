package settings

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// checkPolicy holds what every accepted settings value keeps (FuzzParse).
func checkPolicy(t *testing.T, s *Settings) {
	t.Helper()
	if s.NamespaceSeparator != "." && s.NamespaceSeparator != "__" {
		t.Fatalf("separator %q", s.NamespaceSeparator)
	}
	if _, err := glob.NewRules(s.ToolOrder); err != nil {
		t.Fatalf("tool rules accepted that glob refuses: %v", err)
	}
	for _, name := range s.ToolOrder {
		r := s.Tools[name]
		if !r.Refuse && r.Action == "" || r.Refuse && (r.Amount != nil || r.Quota != nil) || r.Quota != nil && r.Quota.None() {
			t.Fatalf("tool rule %q accepted: %+v", name, r)
		}
	}
	for _, name := range s.ServerOrder {
		u := s.Servers[name]
		if (u.Stdio == nil) == (u.HTTP == nil) || u.Name != name {
			t.Fatalf("server %q accepted: %+v", name, u)
		}
	}
	if _, err := redact.New(make([]byte, redact.SaltSize), s.Redaction); err != nil {
		t.Fatalf("redaction accepted that redact refuses: %v", err)
	}
}

// multi is a valid settings object of several servers.
const multi = `{
  "name": "t",
  "servers": {
    "fs": {"command": "/bin/fs", "args": ["/data"], "env": {"TOKEN": {"file": "fs-token"}}},
    "web": {"url": "https://tools.example/mcp", "headers": {"Authorization": {"file": "secrets/web-token"}, "X-Team": {"value": "a"}}}
  },
  "agent": {"slip": "slip.json", "book": "book.jsonl", "keys": "agent.keys", "issuerKeys": ["NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"]},
  "executor": {"keys": "executor.keys", "copy": "copy.jsonl", "copyKey": "copy.key"},
  "tools": {
    "fs.read_*": {"action": "provared.data.read"},
    "fs.search_files": {"action": "provared.data.read", "quota": {"perRun": 10, "perMinute": 3}},
    "fs.move_file": {"refuse": true},
    "web.*": {"action": "web.fetch", "quota": {"perHour": 100, "perDay": 1000}},
    "*": {"refuse": true, "action": "executor.refused"}
  },
  "redaction": {"extend": ["\\bACME-[0-9]{6}\\b"], "extendKeys": ["client_secret"]}
}`

func editMulti(old, replacement string) string {
	if !strings.Contains(multi, old) {
		panic("no " + old)
	}
	return strings.Replace(multi, old, replacement, 1)
}

func TestServers(t *testing.T) {
	s, warns, err := Parse("/work/x.json", []byte(multi))
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Command != "" || !reflect.DeepEqual(s.ServerOrder, []string{"fs", "web"}) || s.NamespaceSeparator != "." {
		t.Fatalf("servers %v sep %q server %+v", s.ServerOrder, s.NamespaceSeparator, s.Server)
	}
	fs := s.Servers["fs"]
	if fs.Name != "fs" || fs.HTTP != nil || fs.Stdio == nil || fs.Stdio.Command != "/bin/fs" || fs.Stdio.Cwd != "/work" ||
		!reflect.DeepEqual(fs.Stdio.Env, []EnvVar{{Name: "TOKEN", Source: "/work/fs-token"}}) ||
		!reflect.DeepEqual(fs.Stdio.PassEnv, DefaultPassEnv) {
		t.Fatalf("fs %+v %+v", fs, fs.Stdio)
	}
	web := s.Servers["web"]
	if web.Stdio != nil || web.HTTP == nil || web.HTTP.URL != "https://tools.example/mcp" ||
		!reflect.DeepEqual(web.HTTP.Headers, []EnvVar{{Name: "Authorization", Source: "/work/secrets/web-token"}, {Name: "X-Team", Value: "a", IsValue: true}}) {
		t.Fatalf("web %+v %+v", web, web.HTTP)
	}
	if !reflect.DeepEqual(s.ToolOrder, []string{"fs.read_*", "fs.search_files", "fs.move_file", "web.*", "*"}) {
		t.Fatalf("tool order %v", s.ToolOrder)
	}
	if r := s.Tools["fs.search_files"]; r.Quota == nil || *r.Quota != (quota.Limits{PerRun: 10, PerMinute: 3}) || r.Refuse {
		t.Fatalf("search_files %+v", r)
	}
	if r := s.Tools["fs.move_file"]; !r.Refuse || r.Action != "" || r.Quota != nil {
		t.Fatalf("move_file %+v", r)
	}
	if r := s.Tools["*"]; !r.Refuse || r.Action != "executor.refused" {
		t.Fatalf("* %+v", r)
	}
	if r := s.Tools["web.*"]; r.Quota == nil || *r.Quota != (quota.Limits{PerHour: 100, PerDay: 1000}) {
		t.Fatalf("web.* %+v", r)
	}
	if !reflect.DeepEqual(s.Redaction, redact.Options{Extend: []string{`\bACME-[0-9]{6}\b`}, ExtendKeys: []string{"client_secret"}}) {
		t.Fatalf("redaction %+v", s.Redaction)
	}
	// X-Team's value is written in the settings, but looks like no secret.
	if len(warns) != 0 {
		t.Fatalf("warnings %v", warns)
	}
	checkPolicy(t, s)
	// The rules resolve as package glob says.
	rules, err := glob.NewRules(s.ToolOrder)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"fs.read_file": "fs.read_*", "fs.search_files": "fs.search_files", "fs.write_file": "*", "web.fetch": "web.*"} {
		if d, ok := rules.Resolve(name); !ok || d.Pattern != want {
			t.Errorf("%s decided by %+v, want %s", name, d, want)
		}
	}
}

func TestServersSeparator(t *testing.T) {
	text := strings.ReplaceAll(editMulti(`"name": "t",`, `"name": "t", "namespaceSeparator": "__",`), `"fs.`, `"fs__`)
	text = strings.Replace(text, `"web.*"`, `"web__*"`, 1)
	s, _, err := Parse("/work/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.NamespaceSeparator != "__" || s.Tools["fs__move_file"].Refuse != true {
		t.Fatalf("sep %q tools %v", s.NamespaceSeparator, s.ToolOrder)
	}
	// With "__", a server name may hold one "_" but not end in it.
	text = strings.Replace(text, `"fs": {`, `"my_fs": {`, 1)
	text = strings.ReplaceAll(text, `"fs__`, `"my_fs__`)
	if _, _, err := Parse("/work/x.json", []byte(text)); err != nil {
		t.Fatalf("my_fs with __: %v", err)
	}
}

func TestSingleServerKeepsWorking(t *testing.T) {
	text := edit(`"tools": {"order": {`, `"tools": {"read_*": {"action": "provared.data.read"}, "rm": {"refuse": true}, "order": {`)
	s, _, err := Parse("/work/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.Servers != nil || s.ServerOrder != nil || s.Server.Command != "/bin/server" || s.NamespaceSeparator != "." ||
		!s.Tools["rm"].Refuse || s.Tools["read_*"].Action != "provared.data.read" {
		t.Fatalf("single form: %+v", s)
	}
	if !reflect.DeepEqual(s.Redaction, redact.Options{}) {
		t.Fatalf("redaction default %+v", s.Redaction)
	}
	_, warns, err := Parse("/work/x.json", []byte(edit(`"name": "t",`, `"name": "t", "namespaceSeparator": "__",`)))
	if err != nil || len(warns) != 1 || warns[0].Place != "namespaceSeparator" {
		t.Fatalf("separator with one server: %v %v", warns, err)
	}
}

func TestPolicyWarnings(t *testing.T) {
	text := editMulti(`"url": "https://tools.example/mcp"`, `"url": "http://127.0.0.1:8080/mcp"`)
	text = strings.Replace(text, `"extendKeys": ["client_secret"]}`, `"extendKeys": ["client_secret"], "replaceBuiltin": true}`, 1)
	s, warns, err := Parse("/work/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range warns {
		got[w.Place] = true
	}
	for _, p := range []string{"servers.web.url", "redaction.replaceBuiltin"} {
		if !got[p] {
			t.Errorf("no warning at %s: %v", p, warns)
		}
	}
	if !s.Redaction.ReplaceBuiltin {
		t.Fatal("replaceBuiltin")
	}
	for _, u := range []string{"http://localhost/mcp", "http://[::1]:9/mcp"} {
		if _, _, err := Parse("/work/x.json", []byte(editMulti(`"https://tools.example/mcp"`, `"`+u+`"`))); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestPolicyFaults(t *testing.T) {
	for _, c := range []struct {
		name, text, place, reason string
	}{
		{"server and servers", editMulti(`"name": "t",`, `"name": "t", "server": {"command": "/bin/x"},`), "servers", `either "server"`},
		{"neither", editMulti(`"servers": {`, `"serverz": {`), "serverz", "not a known member"},
		{"servers empty", strings.Replace(multi, multi[strings.Index(multi, `"servers": {`):strings.Index(multi, `  "agent"`)], `"servers": {},`+"\n", 1), "servers", "at least one"},
		{"servers not object", strings.Replace(multi, multi[strings.Index(multi, `"servers": {`):strings.Index(multi, `  "agent"`)], `"servers": [],`+"\n", 1), "servers", "must be an object"},
		{"server name form", editMulti(`"fs": {`, `"f s": {`), `servers["f s"]`, "not a server name"},
		{"server name dot", editMulti(`"fs": {`, `"fs.x": {`), `servers["fs.x"]`, "not a server name"},
		{"server name long", editMulti(`"fs": {`, `"`+strings.Repeat("f", 33)+`": {`), "servers." + strings.Repeat("f", 33), "not a server name"},
		{"server name with __", strings.Replace(editMulti(`"fs": {`, `"f__s": {`), `"name": "t",`, `"name": "t", "namespaceSeparator": "__",`, 1), "servers.f__s", "namespace separator"},
		{"server name ends _", strings.Replace(editMulti(`"fs": {`, `"fs_": {`), `"name": "t",`, `"name": "t", "namespaceSeparator": "__",`, 1), "servers.fs_", "nor end in"},
		{"separator other", editMulti(`"name": "t",`, `"name": "t", "namespaceSeparator": "/",`), "namespaceSeparator", `"." or "__"`},
		{"separator type", editMulti(`"name": "t",`, `"name": "t", "namespaceSeparator": 1,`), "namespaceSeparator", "must be text"},
		{"stdio unknown member", editMulti(`"command": "/bin/fs",`, `"command": "/bin/fs", "url": 1,`), "servers.fs.command", "not a known member"},
		{"stdio missing command", editMulti(`"command": "/bin/fs", `, ``), "servers.fs.command", "missing"},
		{"stdio env name", editMulti(`"TOKEN"`, `"1TOKEN"`), "servers.fs.env.1TOKEN", "variable name"},
		{"http unknown member", editMulti(`"url": "https://tools.example/mcp",`, `"url": "https://tools.example/mcp", "env": {},`), "servers.web.env", "not a known member"},
		{"http plain", editMulti(`"https://tools.example/mcp"`, `"http://tools.example/mcp"`), "servers.web.url", "loopback"},
		{"http scheme", editMulti(`"https://tools.example/mcp"`, `"ftp://tools.example/mcp"`), "servers.web.url", "https address"},
		{"http no host", editMulti(`"https://tools.example/mcp"`, `"https:///mcp"`), "servers.web.url", "https address"},
		{"http credentials", editMulti(`"https://tools.example/mcp"`, `"https://u:p@tools.example/mcp"`), "servers.web.url", "credentials"},
		{"http fragment", editMulti(`"https://tools.example/mcp"`, `"https://tools.example/mcp#x"`), "servers.web.url", "fragment"},
		{"http url type", editMulti(`"https://tools.example/mcp"`, `5`), "servers.web.url", "must be text"},
		{"header name", editMulti(`"X-Team"`, `"X Team"`), `servers.web.headers["X Team"]`, "header name"},
		{"header twice", editMulti(`"X-Team"`, `"authorization"`), "servers.web.headers.authorization", "named twice"},
		{"header transport", editMulti(`"X-Team"`, `"Mcp-Session-Id"`), "servers.web.headers.Mcp-Session-Id", "sets Mcp-Session-Id itself"},
		{"header source", editMulti(`{"value": "a"}`, `"vualt:x"`), "servers.web.headers.X-Team", "file path, env:"},
		{"header number", editMulti(`{"value": "a"}`, `1`), "servers.web.headers.X-Team", "must be a source"},
		{"exact rule names no server", editMulti(`"fs.move_file"`, `"files.move_file"`), `tools["files.move_file"]`, "names no server"},
		{"exact rule without server", editMulti(`"fs.move_file"`, `"move_file"`), "tools.move_file", "names no server"},
		{"exact rule bad tool", editMulti(`"fs.move_file"`, `"fs.`+strings.Repeat("m", 129)+`"`), `tools["fs.` + strings.Repeat("m", 129) + `"]`, "not a tool name after"},
		{"pattern metachar", editMulti(`"fs.read_*"`, `"fs.read_[a-z]"`), `tools["fs.read_[a-z]"]`, "not allowed"},
		{"pattern long", editMulti(`"fs.read_*"`, `"`+strings.Repeat("*", 192)+`"`), `tools["` + strings.Repeat("*", 192) + `"]`, "1 to 191"},
		{"refuse type", editMulti(`"refuse": true}`, `"refuse": "yes"}`), `tools["fs.move_file"].refuse`, "true or false"},
		{"refuse with quota", editMulti(`{"refuse": true}`, `{"refuse": true, "quota": {"perRun": 1}}`), `tools["fs.move_file"].quota`, "refuses has no quota"},
		{"refuse with amount", editMulti(`{"refuse": true}`, `{"refuse": true, "amount": {"unit": "x", "value": 1}}`), `tools["fs.move_file"].amount`, "refuses has no amount"},
		{"refuse false needs action", editMulti(`{"refuse": true}`, `{"refuse": false}`), `tools["fs.move_file"].action`, "missing"},
		{"quota empty", editMulti(`"quota": {"perRun": 10, "perMinute": 3}`, `"quota": {}`), `tools["fs.search_files"].quota`, "at least one"},
		{"quota zero", editMulti(`"perRun": 10`, `"perRun": 0`), `tools["fs.search_files"].quota.perRun`, "from 1 to 1000000"},
		{"quota big", editMulti(`"perRun": 10`, `"perRun": 1000001`), `tools["fs.search_files"].quota.perRun`, "from 1 to 1000000"},
		{"quota fraction", editMulti(`"perMinute": 3`, `"perMinute": 2.5`), `tools["fs.search_files"].quota.perMinute`, "whole number"},
		{"quota unknown", editMulti(`"perMinute": 3`, `"perSecond": 3`), `tools["fs.search_files"].quota.perSecond`, "not a known member"},
		{"quota type", editMulti(`"quota": {"perRun": 10, "perMinute": 3}`, `"quota": 3`), `tools["fs.search_files"].quota`, "must be an object"},
		{"redaction unknown", editMulti(`"extendKeys": [`, `"keys": [`), "redaction.keys", "not a known member"},
		{"redaction bad RE2", editMulti(`"\\bACME-[0-9]{6}\\b"`, `"(?<=x)y"`), "redaction.extend[0]", "not an RE2 expression"},
		{"redaction empty match", editMulti(`"\\bACME-[0-9]{6}\\b"`, `"x*"`), "redaction.extend[0]", "matches the empty text"},
		{"redaction empty extend", editMulti(`"\\bACME-[0-9]{6}\\b"`, `""`), "redaction.extend[0]", "must not be empty"},
		{"redaction extend type", editMulti(`["\\bACME-[0-9]{6}\\b"]`, `"x"`), "redaction.extend", "must be a list"},
		{"redaction key empty", editMulti(`["client_secret"]`, `["a", ""]`), "redaction.extendKeys[1]", "must not be empty"},
		{"redaction key twice", editMulti(`["client_secret"]`, `["client_secret", "Client_Secret"]`), "redaction.extendKeys[1]", "named twice"},
		{"redaction replace nothing", editMulti(`{"extend": ["\\bACME-[0-9]{6}\\b"], "extendKeys": ["client_secret"]}`, `{"replaceBuiltin": true}`), "redaction.replaceBuiltin", "nothing would be redacted"},
		{"redaction replace type", editMulti(`"extendKeys": [`, `"replaceBuiltin": 1, "extendKeys": [`), "redaction.replaceBuiltin", "true or false"},
		{"single-server glob metachar", edit(`"order":`, `"ord{er}":`), `tools["ord{er}"]`, "not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("/work/x.json", []byte(c.text))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want *Error", err)
			}
			if se.Place != c.place || !strings.Contains(se.Reason, c.reason) {
				t.Fatalf("got %q (place %q), want place %q and %q", err, se.Place, c.place, c.reason)
			}
		})
	}
}

func TestLoadServersExample(t *testing.T) {
	s, warns, err := Load("testdata/servers.example.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 || len(s.Servers) != 2 || s.Servers["web"].HTTP == nil || s.Servers["fs"].Stdio == nil ||
		len(s.ToolOrder) != 5 || !s.Tools["fs.move_file"].Refuse {
		t.Fatalf("%v %+v", warns, s)
	}
	checkPolicy(t, s)
}

func TestRoute(t *testing.T) {
	s, _, err := Parse("/work/x.json", []byte(multi))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, server, tool string
		ok                 bool
	}{
		{"fs.read_file", "fs", "read_file", true},
		{"fs.rent.car", "fs", "rent.car", true}, // split at the first separator
		{"web.fetch", "web", "fetch", true},
		{"files.read", "", "", false},
		{"fs.", "", "", false},
		{"fs", "", "", false},
		{"read_file", "", "", false},
	} {
		server, tool, ok := s.Route(c.name)
		if server != c.server || tool != c.tool || ok != c.ok {
			t.Errorf("Route(%q) = %q %q %v", c.name, server, tool, ok)
		}
		if ok && s.Qualified(server, tool) != c.name {
			t.Errorf("Qualified(%q, %q) = %q", server, tool, s.Qualified(server, tool))
		}
	}
	one, _, err := Parse("/work/x.json", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if server, tool, ok := one.Route("fs.read_file"); server != "" || tool != "fs.read_file" || !ok || one.Qualified("", "x") != "x" {
		t.Fatal("single server form")
	}
	text := strings.ReplaceAll(editMulti(`"name": "t",`, `"name": "t", "namespaceSeparator": "__",`), `"fs.`, `"fs__`)
	text = strings.Replace(text, `"web.*"`, `"web__*"`, 1)
	two, _, err := Parse("/work/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if server, tool, ok := two.Route("fs___x"); server != "fs" || tool != "_x" || !ok || two.Qualified("fs", "_x") != "fs___x" {
		t.Fatalf("__: %q %q %v", server, tool, ok)
	}
}

func TestGlobReachingNoServerWarned(t *testing.T) {
	for _, c := range []struct {
		pattern string
		warned  bool
	}{
		{"files.*", true},
		{"fsx*", true},
		{"f*", false},
		{"fs.*", false},
		{"fs?read", false}, // the literal beginning "fs" agrees with "fs."
		{"w?b.*", false},
		{"*.x", false},
	} {
		text := editMulti(`"fs.move_file": {"refuse": true},`, `"fs.move_file": {"refuse": true}, "`+c.pattern+`": {"refuse": true},`)
		_, warns, err := Parse("/work/x.json", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		got := false
		for _, w := range warns {
			if strings.Contains(w.Message, "matches no tool of any server") {
				got = true
			}
		}
		if got != c.warned {
			t.Errorf("%s: warned %v, want %v (%v)", c.pattern, got, c.warned, warns)
		}
	}
}

func TestPolicyInUse(t *testing.T) {
	s, _, err := Parse("/work/x.json", []byte(multi))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"servers", `tools["fs.read_*"]`, `tools["fs.search_files"].quota`, `tools["fs.move_file"].refuse`, `tools["web.*"]`, "tools[\"*\"]", "redaction"}
	if got := s.PolicyInUse(); !reflect.DeepEqual(got, want) {
		t.Fatalf("PolicyInUse = %q, want %q", got, want)
	}
	one, _, err := Parse("/work/x.json", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if got := one.PolicyInUse(); got != nil {
		t.Fatalf("plain settings: %q", got)
	}
}
