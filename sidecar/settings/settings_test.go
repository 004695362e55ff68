package settings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

func TestLoadExample(t *testing.T) {
	s, warns, err := Load("testdata/executor.example.json")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	if s.Dir != dir || s.File != filepath.Join(dir, "executor.example.json") {
		t.Fatalf("file %s dir %s", s.File, s.Dir)
	}
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	want := Server{
		Command: "/usr/local/bin/node",
		Args:    []string{"files-server.mjs"},
		Cwd:     filepath.Join(dir, "servers/files"),
		Path:    []string{"/usr/local/bin"},
		Env: []EnvVar{
			{Name: "FILES_API_TOKEN", Source: filepath.Join(dir, "secrets/files-token")},
			{Name: "FILES_DB_PASSWORD", Source: "vault:kv/files/db#password"},
			{Name: "FILES_S3_KEY", Source: "secret:agents/files-s3#key"},
		},
		PassEnv: []string{"PATH", "HOME", "LANG"},
	}
	if !reflect.DeepEqual(s.Server, want) {
		t.Fatalf("server:\n got  %+v\n want %+v", s.Server, want)
	}
	if s.Agent.Slip != filepath.Join(dir, "slip.json") || s.Agent.Keys != (KeySource{Whole: filepath.Join(dir, "keys/agent.jwk")}) ||
		len(s.Agent.IssuerKeys) != 1 {
		t.Fatalf("agent: %+v", s.Agent)
	}
	if s.Executor.Keys != (KeySource{Ed25519: "vault-transit:executor", MLDSA87: "vault:kv/executor/keys#mldsa87Seed"}) {
		t.Fatalf("executor keys: %+v", s.Executor.Keys)
	}
	if got := s.ToolNames(); !reflect.DeepEqual(got, []string{"read_file", "order_supplies", "send_messages", "rent.car"}) {
		t.Fatalf("tool order %v", got)
	}
	if a := s.Tools["order_supplies"].Amount; a == nil || *a != (Amount{Unit: "GBP", Kind: AmountPointer, Pointer: "/total"}) {
		t.Fatalf("order_supplies amount %+v", a)
	}
	if a := s.Tools["send_messages"].Amount; a == nil || a.Kind != AmountCount || a.Pointer != "/recipients" {
		t.Fatalf("send_messages amount %+v", a)
	}
	if a := s.Tools["rent.car"].Amount; a == nil || a.Kind != AmountFixed || a.Value != 1 {
		t.Fatalf("rent.car amount %+v", a)
	}
	if s.Tools["read_file"].Amount != nil || s.Tools["read_file"].Action != "provared.data.read" {
		t.Fatalf("read_file %+v", s.Tools["read_file"])
	}
	if s.ContentRules != filepath.Join(dir, "content-rules.json") {
		t.Fatalf("contentRules %s", s.ContentRules)
	}
	if s.Vault == nil || s.Vault.Auth.Kubernetes == nil || s.Vault.Auth.Kubernetes.Mount != "kubernetes" ||
		s.Vault.Auth.Kubernetes.TokenFile != DefaultServiceAccountToken || s.Kubernetes == nil || s.Kubernetes.Kubeconfig != "" {
		t.Fatalf("vault %+v kubernetes %+v", s.Vault, s.Kubernetes)
	}
}

func TestDefaults(t *testing.T) {
	s, warns, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Service != "executor" || s.Unlisted != UnlistedRefuse || !s.HideUnlisted || !s.CallIDInMeta ||
		s.Timeout != 300*time.Second || s.DenialsPerHour != 600 || s.ShutdownWait != 5*time.Second ||
		s.MaxWaiting != 16 || s.MaxBytesWaiting != 64<<20 || s.SignTimeout != 10*time.Second || s.SignTries != 3 || s.Server.Cwd != s.Dir || !reflect.DeepEqual(s.Server.PassEnv, DefaultPassEnv) ||
		s.Vault != nil || s.Kubernetes != nil || s.ContentRules != "" || len(s.Tools) != 0 {
		t.Fatalf("defaults: %+v", s)
	}
	places := map[string]bool{}
	for _, w := range warns {
		places[w.Place] = true
	}
	// agent.issuerKeys left out is no warning: its value is known only
	// after the page step, and keys, tools and page work without it; the
	// start and check refuse it (TestTrustsAPasskey).
	if !places["server.command"] || len(warns) != 1 {
		t.Fatalf("warnings %v", warns)
	}
}

// TestTrustsAPasskey: settings without agent.issuerKeys read, and say
// what is missing and how to get it; with a thumbprint there is nothing
// to say.
func TestTrustsAPasskey(t *testing.T) {
	s, _, err := Load("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	err = s.TrustsAPasskey()
	var se *Error
	if !errors.As(err, &se) || se.Place != "agent.issuerKeys" || se.File != s.File {
		t.Fatalf("TrustsAPasskey() = %v, want an *Error at agent.issuerKeys of %s", err, s.File)
	}
	for _, want := range []string{"will not start", "mcp-executor page --config " + s.File, "thumbprint"} {
		if !strings.Contains(se.Reason, want) {
			t.Errorf("the reason %q does not say %q", se.Reason, want)
		}
	}
	s, _, err = Parse("/work/x.json", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.TrustsAPasskey(); err != nil {
		t.Errorf("with a thumbprint: %v", err)
	}
}

// TestReservedActions: an action that begins "provared." must be one of
// the format's 30 shared actions; the refusal lists them all and says how
// to name an action of one's own. Shared names and names of one's own
// (also ones that merely hold "provared") are accepted.
func TestReservedActions(t *testing.T) {
	for _, ok := range []string{"provared.data.read", "provared.account.sign-in", "provared.agent.instruct", "files.write", "acme.provared.data.write", "provared"} {
		if _, _, err := Parse("/work/x.json", []byte(edit(`"supplies.order"`, `"`+ok+`"`))); err != nil {
			t.Errorf("action %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"provared.data.write", "provared.", "provared.data.read.all", "provared.x"} {
		_, _, err := Parse("/work/x.json", []byte(edit(`"supplies.order"`, `"`+bad+`"`)))
		var se *Error
		if !errors.As(err, &se) || se.Place != "tools.order.action" {
			t.Errorf("action %q: %v, want a fault at tools.order.action", bad, err)
			continue
		}
		for _, want := range append(record.SharedActions(), `"`+bad+`" is not one of the 30 shared actions`, "a prefix of your own") {
			if !strings.Contains(se.Reason, want) {
				t.Errorf("action %q: the reason %q does not name %q", bad, se.Reason, want)
			}
		}
	}
	if n := len(record.SharedActions()); n != 30 {
		t.Errorf("%d shared actions, want the format's 30", n)
	}
}

// base is a valid settings object; each fault case changes one thing.
const base = `{
  "name": "t",
  "server": {"command": "/bin/server", "env": {}},
  "agent": {"slip": "slip.json", "book": "book.jsonl", "keys": "agent.keys", "issuerKeys": ["NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"]},
  "executor": {"keys": "executor.keys", "copy": "copy.jsonl", "copyKey": "copy.key"},
  "tools": {"order": {"action": "supplies.order", "amount": {"unit": "GBP", "pointer": "/total"}}}
}`

func edit(old, replacement string) string {
	if !strings.Contains(base, old) {
		panic("no " + old)
	}
	return strings.Replace(base, old, replacement, 1)
}

func TestFaults(t *testing.T) {
	cases := []struct {
		name, text, place, reason string
	}{
		{"not utf-8", "{\"name\":\"\xff\"}", "", "not UTF-8"},
		{"not json", `{"name":`, "", "not JSON"},
		{"trailing", base + ` {}`, "", "more after"},
		{"not object", `[]`, "", "must be an object"},
		{"duplicate", edit(`"name": "t",`, `"name": "t", "name": "u",`), "name", "member given twice"},
		{"duplicate escaped", edit(`"name": "t",`, `"name": "t", "n\u0061me": "u",`), "name", "member given twice"},
		{"duplicate deep", edit(`"unit": "GBP",`, `"unit": "GBP", "unit": "EUR",`), "tools.order.amount.unit", "member given twice"},
		{"unknown member", edit(`"name": "t",`, `"name": "t", "colour": 1,`), "colour", "not a known member"},
		{"unknown deep", edit(`"copy": "copy.jsonl",`, `"copy": "copy.jsonl", "cpy": 1,`), "executor.cpy", "not a known member"},
		{"missing name", edit(`"name": "t",`, ``), "name", "missing"},
		{"name type", edit(`"name": "t"`, `"name": 5`), "name", "must be text"},
		{"name empty", edit(`"name": "t"`, `"name": ""`), "name", "must not be empty"},
		{"name long", edit(`"name": "t"`, `"name": "`+strings.Repeat("é", 201)+`"`), "name", "1 to 200"},
		{"service form", edit(`"name": "t",`, `"name": "t", "service": "Executor",`), "service", "service id"},
		{"missing server", edit(`"server": {"command": "/bin/server", "env": {}},`, ``), "server", "missing"},
		{"missing command", edit(`"command": "/bin/server", `, ``), "server.command", "missing"},
		{"args type", edit(`"command": "/bin/server",`, `"command": "/bin/server", "args": ["a", 1],`), "server.args[1]", "must be text"},
		{"path empty", edit(`"command": "/bin/server",`, `"command": "/bin/server", "path": [],`), "server.path", "at least one"},
		{"env name", edit(`"env": {}`, `"env": {"1X": "a"}`), "server.env.1X", "variable name"},
		{"env bad source", edit(`"env": {}`, `"env": {"X": "vault:nofield"}`), "server.env.X", "vault:<mount>/<path>#<field>"},
		{"env unknown prefix", edit(`"env": {}`, `"env": {"X": "vualt:kv/a#b"}`), "server.env.X", "file path, env:"},
		{"env transit", edit(`"env": {}`, `"env": {"X": "vault-transit:k"}`), "server.env.X", "vault-transit is not allowed"},
		{"env secret form", edit(`"env": {}`, `"env": {"X": "secret:NS/a#b"}`), "server.env.X", "secret:<namespace>/<name>#<key>"},
		{"env env form", edit(`"env": {}`, `"env": {"X": "env:1A"}`), "server.env.X", "env:<variable name>"},
		{"env two kinds", edit(`"env": {}`, `"env": {"X": {"file": "a", "value": "b"}}`), "server.env.X", "exactly one"},
		{"env none", edit(`"env": {}`, `"env": {"X": {}}`), "server.env.X", "exactly one"},
		{"env unknown kind", edit(`"env": {}`, `"env": {"X": {"vault": "a"}}`), "server.env.X.vault", "not a known member"},
		{"env number", edit(`"env": {}`, `"env": {"X": 1}`), "server.env.X", "must be a source"},
		{"env vault no block", edit(`"env": {}`, `"env": {"X": "vault:kv/a#b"}`), "server.env.X", "no vault block"},
		{"passEnv name", edit(`"env": {}`, `"env": {}, "passEnv": ["PATH", "A-B"]`), "server.passEnv[1]", "variable name"},
		{"passEnv twice", edit(`"env": {}`, `"env": {}, "passEnv": ["PATH", "PATH"]`), "server.passEnv[1]", "named twice"},
		{"missing slip", edit(`"slip": "slip.json", `, ``), "agent.slip", "missing"},
		{"issuer form", edit(`"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"`, `"abc"`), "agent.issuerKeys[0]", "thumbprint"},
		{"issuer empty", edit(`["NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"]`, `[]`), "agent.issuerKeys", "an empty list trusts no passkey"},
		{"issuer twice", edit(`"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"`, `"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs","NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"`), "agent.issuerKeys[1]", "named twice"},
		{"agent keys transit alone", edit(`"keys": "agent.keys"`, `"keys": "vault-transit:agent"`), "agent.keys", "only the Ed25519 half"},
		{"keys split missing half", edit(`"keys": "executor.keys"`, `"keys": {"ed25519": "a"}`), "executor.keys.mldsa87", "missing"},
		{"keys split transit mldsa", edit(`"keys": "executor.keys"`, `"keys": {"ed25519": "a", "mldsa87": "vault-transit:x"}`), "executor.keys.mldsa87", "vault-transit is not allowed"},
		{"keys split unknown", edit(`"keys": "executor.keys"`, `"keys": {"ed25519": "a", "mldsa87": "b", "x": "c"}`), "executor.keys.x", "not a known member"},
		{"copyKey transit", edit(`"copyKey": "copy.key"`, `"copyKey": "vault-transit:c"`), "executor.copyKey", "vault-transit is not allowed"},
		{"missing copy", edit(`"copy": "copy.jsonl", `, ``), "executor.copy", "missing"},
		{"missing tools", edit(`,
  "tools": {"order": {"action": "supplies.order", "amount": {"unit": "GBP", "pointer": "/total"}}}`, ``), "tools", "missing"},
		{"tool name", edit(`"order":`, `"or der":`), `tools["or der"]`, "not a tool name"},
		{"tool name long", edit(`"order":`, `"`+strings.Repeat("a", 129)+`":`), "tools." + strings.Repeat("a", 129), "not a tool name"},
		{"tool not object", edit(`{"action": "supplies.order", "amount": {"unit": "GBP", "pointer": "/total"}}`, `"supplies.order"`), "tools.order", "must be an object"},
		{"action missing", edit(`"action": "supplies.order", `, ``), "tools.order.action", "missing"},
		{"action form", edit(`"supplies.order"`, `"Supplies.Order"`), "tools.order.action", "action name"},
		{"amount unit", edit(`"GBP"`, `"G B P"`), "tools.order.amount.unit", "must be a unit"},
		{"amount unit missing", edit(`"unit": "GBP", `, ``), "tools.order.amount.unit", "missing"},
		{"amount two", edit(`"pointer": "/total"`, `"pointer": "/total", "value": 3`), "tools.order.amount", "exactly one"},
		{"amount none", edit(`, "pointer": "/total"`, ``), "tools.order.amount", "exactly one"},
		{"amount pointer", edit(`"/total"`, `"total"`), "tools.order.amount.pointer", "must be a JSON pointer"},
		{"amount pointer tilde", edit(`"/total"`, `"/to~2tal"`), "tools.order.amount.pointer", "must be a JSON pointer"},
		{"amount pointer empty", edit(`"/total"`, `""`), "tools.order.amount.pointer", "must be a JSON pointer"},
		{"amount count type", edit(`"pointer": "/total"`, `"count": 3`), "tools.order.amount.count", "must be text"},
		{"amount value fraction", edit(`"pointer": "/total"`, `"value": 1.5`), "tools.order.amount.value", "whole number"},
		{"amount value big", edit(`"pointer": "/total"`, `"value": 9007199254740992`), "tools.order.amount.value", "whole number"},
		{"amount value negative", edit(`"pointer": "/total"`, `"value": -1`), "tools.order.amount.value", "whole number"},
		{"unlisted", edit(`"name": "t",`, `"name": "t", "unlisted": "allow",`), "unlisted", `"refuse" or "forward"`},
		{"hideUnlisted type", edit(`"name": "t",`, `"name": "t", "hideUnlisted": "yes",`), "hideUnlisted", "true or false"},
		{"callIdInMeta type", edit(`"name": "t",`, `"name": "t", "callIdInMeta": 1,`), "callIdInMeta", "true or false"},
		{"timeout low", edit(`"name": "t",`, `"name": "t", "timeout": 999,`), "timeout", "from 1000 to 86400000"},
		{"timeout high", edit(`"name": "t",`, `"name": "t", "timeout": 86400001,`), "timeout", "from 1000 to 86400000"},
		{"timeout exp", edit(`"name": "t",`, `"name": "t", "timeout": 1e4,`), "timeout", "whole number"},
		{"timeout text", edit(`"name": "t",`, `"name": "t", "timeout": "1000",`), "timeout", "must be a whole number"},
		{"denials zero", edit(`"name": "t",`, `"name": "t", "denialsPerHour": 0,`), "denialsPerHour", "from 1 to 1000000"},
		{"shutdownWait high", edit(`"name": "t",`, `"name": "t", "shutdownWait": 600001,`), "shutdownWait", "from 0 to 600000"},
		{"maxWaiting high", edit(`"name": "t",`, `"name": "t", "maxWaiting": 1001,`), "maxWaiting", "from 1 to 1000"},
		{"maxBytesWaiting low", edit(`"name": "t",`, `"name": "t", "maxBytesWaiting": 1048575,`), "maxBytesWaiting", "from 1048576 to 17179869184"},
		{"signTimeout low", edit(`"name": "t",`, `"name": "t", "signTimeout": 99,`), "signTimeout", "from 100 to 600000"},
		{"signTries zero", edit(`"name": "t",`, `"name": "t", "signTries": 0,`), "signTries", "from 1 to 10"},
		{"contentRules type", edit(`"name": "t",`, `"name": "t", "contentRules": true,`), "contentRules", "must be text"},
		{"vault auth missing", edit(`"name": "t",`, `"name": "t", "vault": {},`), "vault.auth", "missing"},
		{"vault auth two", edit(`"name": "t",`, `"name": "t", "vault": {"auth": {"token": {}, "appRole": {}}},`), "vault.auth", "exactly one"},
		{"vault auth none", edit(`"name": "t",`, `"name": "t", "vault": {"auth": {}},`), "vault.auth", "exactly one"},
		{"vault address", edit(`"name": "t",`, `"name": "t", "vault": {"address": "vault:8200", "auth": {"token": {}}},`), "vault.address", "http or https"},
		{"vault k8s role", edit(`"name": "t",`, `"name": "t", "vault": {"auth": {"kubernetes": {}}},`), "vault.auth.kubernetes.role", "missing"},
		{"vault approle secret", edit(`"name": "t",`, `"name": "t", "vault": {"auth": {"appRole": {"roleIdFile": "r"}}},`), "vault.auth.appRole.secretIdFile", "missing"},
		{"vault token unknown", edit(`"name": "t",`, `"name": "t", "vault": {"auth": {"token": {"value": "s.x"}}},`), "vault.auth.token.value", "not a known member"},
		{"kubernetes unknown", edit(`"name": "t",`, `"name": "t", "kubernetes": {"context": "x"},`), "kubernetes.context", "not a known member"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("/work/x.json", []byte(c.text))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want *Error", err)
			}
			if se.File != "/work/x.json" || se.Place != c.place || !strings.Contains(se.Reason, c.reason) {
				t.Fatalf("got %q (place %q), want place %q and %q", err, se.Place, c.place, c.reason)
			}
			prefix := "settings /work/x.json: "
			if c.place != "" {
				prefix += c.place + ": "
			}
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("message %q does not begin %q", err, prefix)
			}
		})
	}
}

func TestMessageForm(t *testing.T) {
	_, _, err := Parse("/work/x.json", []byte(edit(`"/total"`, `"total"`)))
	if err == nil || err.Error() != `settings /work/x.json: tools.order.amount.pointer: must be a JSON pointer (RFC 6901) into the arguments, such as "/total"` {
		t.Fatalf("got %v", err)
	}
}

func TestWarnings(t *testing.T) {
	text := edit(`"env": {}`, `"env": {"A": {"env": "SRC"}, "B": {"value": "v"}, "C": "env:SRC"}, "passEnv": []`)
	text = strings.Replace(text, `"name": "t",`, `"name": "t", "unlisted": "forward",`, 1)
	s, warns, err := Parse("/work/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range warns {
		got[w.Place] = true
		if w.String() == "" || strings.Contains(w.String(), "SRC=") {
			t.Fatalf("warning %q", w)
		}
	}
	for _, p := range []string{"server.env.A", "server.env.C", "unlisted"} {
		if !got[p] {
			t.Errorf("no warning at %s: %v", p, warns)
		}
	}
	if got["server.env.B"] {
		t.Errorf("B's value is written in the settings but looks like no secret, and is warned of: %v", warns)
	}
	wantEnv := []EnvVar{{Name: "A", Source: "env:SRC"}, {Name: "B", Value: "v", IsValue: true}, {Name: "C", Source: "env:SRC"}}
	if !reflect.DeepEqual(s.Server.Env, wantEnv) || len(s.Server.PassEnv) != 0 || s.Unlisted != UnlistedForward {
		t.Fatalf("env %+v passEnv %v", s.Server.Env, s.Server.PassEnv)
	}
}

func TestPaths(t *testing.T) {
	text := edit(`"command": "/bin/server"`, `"command": "bin/server", "cwd": "/srv", "path": ["tools", "/opt/bin"]`)
	text = strings.Replace(text, `"copyKey": "copy.key"`, `"copyKey": "./env:odd"`, 1)
	s, _, err := Parse("/etc/mcp/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Command != "/etc/mcp/bin/server" || s.Server.Cwd != "/srv" ||
		!reflect.DeepEqual(s.Server.Path, []string{"/etc/mcp/tools", "/opt/bin"}) ||
		s.Agent.Book != "/etc/mcp/book.jsonl" || s.Executor.CopyKey != "/etc/mcp/env:odd" {
		t.Fatalf("paths: %+v %+v", s.Server, s.Executor)
	}
	if _, ok := s.Tools["order"]; !ok || !ToolNameOK("a.b-c_9") || ToolNameOK("a b") || ToolNameOK("") {
		t.Fatal("tool names")
	}
}

func TestVaultForms(t *testing.T) {
	for _, c := range []struct {
		auth  string
		check func(*Vault) bool
	}{
		{`{"token": {}}`, func(v *Vault) bool { return v.Auth.Token != nil && v.Auth.Token.File == "" }},
		{`{"token": {"file": "tok"}}`, func(v *Vault) bool { return v.Auth.Token.File == "/work/tok" }},
		{`{"appRole": {"roleIdFile": "r", "secretIdFile": "/s"}}`, func(v *Vault) bool {
			a := v.Auth.AppRole
			return a != nil && a.RoleIDFile == "/work/r" && a.SecretIDFile == "/s" && a.Mount == "approle"
		}},
		{`{"kubernetes": {"role": "r", "mount": "k8s", "tokenFile": "/var/run/t"}}`, func(v *Vault) bool {
			k := v.Auth.Kubernetes
			return k != nil && k.Role == "r" && k.Mount == "k8s" && k.TokenFile == "/var/run/t"
		}},
	} {
		text := edit(`"name": "t",`, `"name": "t", "vault": {"namespace": "team", "auth": `+c.auth+`},`)
		s, _, err := Parse("/work/x.json", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", c.auth, err)
		}
		if s.Vault.Namespace != "team" || !c.check(s.Vault) {
			t.Fatalf("%s: %+v", c.auth, s.Vault.Auth)
		}
	}
}

func TestLoadFileFaults(t *testing.T) {
	if _, _, err := Load(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Fatalf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	var se *Error
	if _, _, err := Load(big); !errors.As(err, &se) || !strings.Contains(se.Reason, "1 MiB") {
		t.Fatalf("big file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/executor.example.json", "testdata/minimal.json", "testdata/servers.example.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(`{"name":"x","name":"y"}`))
	f.Add([]byte(`[`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "fuzz.json")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, _, err := Load(file)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != file {
				t.Fatalf("fault is not a settings *Error: %v", err)
			}
			return
		}
		if s.Name == "" || (s.Server.Command == "") == (s.Servers == nil) || s.MaxWaiting < 1 || s.Timeout < MinTimeout || s.Tools == nil {
			t.Fatalf("accepted settings out of range: %+v", s)
		}
		checkPolicy(t, s)
	})
}

// TestValueWrittenInTheSettings: a variable or header whose value is
// written in the settings is warned of when it looks like a secret, by
// its name or its value, and not when it looks like a setting.
func TestValueWrittenInTheSettings(t *testing.T) {
	for _, c := range []struct {
		name, value string
		warned      bool
	}{
		{"LOG_LEVEL", "debug", false},
		{"NODE_ENV", "production", false},
		{"ROOT", "/srv/data", false},
		{"API_TOKEN", "x", true},
		{"DB_PASSWORD", "hunter2", true},
		{"PRIVATE_KEY", "x", true},
		{"GITHUB", "ghp_" + strings.Repeat("a1B2", 9), true},
		{"URL", "postgres://app:s3cretpw@db.example/app", true},
	} {
		text := edit(`"env": {}`, `"env": {"`+c.name+`": {"value": "`+c.value+`"}}`)
		_, warns, err := Parse("/work/x.json", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		warned := false
		for _, w := range warns {
			warned = warned || w.Place == "server.env."+c.name && strings.Contains(w.Message, "looks like a secret")
		}
		if warned != c.warned {
			t.Errorf("%s=%s: warned %v, want %v (%v)", c.name, c.value, warned, c.warned, warns)
		}
	}
}
