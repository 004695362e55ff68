package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/seed-6e06167c/mcp-executor"

// An arrow rule: no package under one of from (module-relative folders; a folder stands for itself and
// everything under it) but those under one of except may depend, directly or through other packages, on a
// package under one of banned (module-relative folders, or full import paths of other modules). A folder
// written "=sidecar" stands for that one package and nothing under it.
type arrow struct {
	name   string
	from   []string
	except []string
	banned []string
}

// The one-way arrows of docs/architecture.md: cmd -> sidecar/cli -> sidecar/front -> sidecar (the engine)
// -> the rooms beside it (sidecar/upstream, sidecar/held, sidecar/telemetry, sidecar/policy, ...) -> keys,
// copylog -> receipts, and the internal helpers below the rooms they serve. Test packages count too: a
// test that reaches upward would tie the lower room to the upper one all the same.
var arrows = []arrow{
	{
		name:   "the commands are cmd's alone",
		from:   []string{""},
		except: []string{"cmd"},
		banned: []string{"sidecar/cli"},
	},
	{
		name:   "how clients reach the engine is below the commands and above the engine",
		from:   []string{"sidecar"},
		except: []string{"sidecar/cli"},
		banned: []string{"sidecar/front"},
	},
	{
		name:   "the engine is below how clients reach it: no room beside or below it imports it",
		from:   []string{"sidecar"},
		except: []string{"sidecar/cli", "sidecar/front"},
		banned: []string{"=sidecar"},
	},
	{
		name:   "receipts/ and copylog/ know nothing of MCP, keys or the executor",
		from:   []string{"receipts", "copylog"},
		banned: []string{"sidecar", "keys", "cmd", "internal/devsetup", "internal/itest", "github.com/modelcontextprotocol/go-sdk"},
	},
	{
		name:   "copylog builds on receipts, never the other way",
		from:   []string{"receipts"},
		banned: []string{"copylog"},
	},
	{
		name:   "keys are below sidecar and beside copylog",
		from:   []string{"keys"},
		banned: []string{"sidecar", "copylog", "cmd", "github.com/modelcontextprotocol/go-sdk"},
	},
	{
		name:   "internal/devsetup builds working folders from keys and receipts, below the executor",
		from:   []string{"internal/devsetup"},
		banned: []string{"sidecar", "copylog", "cmd", "github.com/modelcontextprotocol/go-sdk"},
	},
	{
		name:   "internal/itest sets up real servers for tests, below the executor",
		from:   []string{"internal/itest"},
		banned: []string{"sidecar", "copylog", "cmd"},
	},
	{
		name:   "internal/syncbuf is a leaf: the standard library only",
		from:   []string{"internal/syncbuf"},
		banned: []string{""}, // "" is the whole module
	},
	{
		name:   "nothing imports cmd",
		from:   []string{""},
		banned: []string{"cmd"},
	},
}

// pkg is the part of `go list -json` output the test reads.
type pkg struct {
	ImportPath string
	Imports    []string
	ForTest    string // set on a test variant ("p [p.test]") of a package
	Standard   bool
}

// TestArrows checks every rule against the module's packages, with and without the integration build tag
// (each tag can add files and so imports).
func TestArrows(t *testing.T) {
	for _, tags := range []string{"", "integration"} {
		t.Run("tags="+tags, func(t *testing.T) {
			graph := load(t, tags)
			for _, a := range arrows {
				t.Run(a.name, func(t *testing.T) {
					for _, v := range violations(graph, a) {
						t.Errorf("%s: %s imports %s (chain: %s); move the code so the arrow points down, see docs/architecture.md",
							a.name, short(v.from), short(v.banned), short(strings.Join(v.chain, " -> ")))
					}
				})
			}
		})
	}
}

// The rules must look at real packages: a folder that was renamed would otherwise make a rule pass by
// matching nothing.
func TestArrowsNameExistingFolders(t *testing.T) {
	graph := load(t, "integration")
	for _, a := range arrows {
		for _, folder := range slices.Concat(a.from, a.except, a.banned) {
			if strings.Contains(folder, ".") {
				continue // another module: its absence is what the rule wants
			}
			folder = strings.TrimPrefix(folder, "=")
			found := false
			for path := range graph {
				if under(path, module, folder) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("rule %q names the folder %q, which holds no package: update the rule to the new layout", a.name, folder)
			}
		}
	}
}

// The checker itself, on a small graph: a banned package reached through another module package is named
// with its chain, a test variant is attributed to its package, and prefixes match whole path elements.
func TestViolationsOnAGraph(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	graph := map[string]pkg{
		m("receipts/book"):                    {ImportPath: m("receipts/book"), Imports: []string{m("receipts/canon"), "fmt"}},
		m("receipts/canon"):                   {ImportPath: m("receipts/canon"), Imports: []string{m("keys")}},
		m("keys"):                             {ImportPath: m("keys")},
		m("receipts/x [receipts/x.test]"):     {ImportPath: m("receipts/x [receipts/x.test]"), ForTest: m("receipts/x"), Imports: []string{m("sidecarish")}},
		m("sidecarish"):                       {ImportPath: m("sidecarish")},
		"fmt":                                 {ImportPath: "fmt", Standard: true},
		m("copylog"):                          {ImportPath: m("copylog"), Imports: []string{m("receipts/canon")}},
		m("cmd/mcp-executor"):                 {ImportPath: m("cmd/mcp-executor"), Imports: []string{m("sidecar")}},
		m("sidecar"):                          {ImportPath: m("sidecar"), Imports: []string{m("keys")}},
		"github.com/modelcontextprotocol/x/y": {ImportPath: "github.com/modelcontextprotocol/x/y"},
	}
	got := violations(graph, arrow{name: "t", from: []string{"receipts"}, banned: []string{"keys", "sidecar"}})
	want := []violation{
		{from: m("receipts/book"), banned: m("keys"), chain: []string{m("receipts/book"), m("receipts/canon"), m("keys")}},
		{from: m("receipts/canon"), banned: m("keys"), chain: []string{m("receipts/canon"), m("keys")}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("violations:\n got %v\nwant %v", got, want)
	}
	if got := violations(graph, arrow{name: "t", from: []string{"copylog"}, banned: []string{"cmd"}}); len(got) != 0 {
		t.Errorf("copylog does not reach cmd, yet: %v", got)
	}
	if got := violations(graph, arrow{name: "t", from: []string{""}, banned: []string{"sidecar"}}); len(got) != 1 || got[0].from != m("cmd/mcp-executor") {
		t.Errorf(`"sidecarish" must not count as "sidecar"; and cmd imports sidecar: %v`, got)
	}
	// "=sidecar" is that package alone, and a package under except is not held to the rule.
	rooms := map[string]pkg{
		m("sidecar"):          {ImportPath: m("sidecar"), Imports: []string{m("sidecar/wire")}},
		m("sidecar/wire"):     {ImportPath: m("sidecar/wire")},
		m("sidecar/cli"):      {ImportPath: m("sidecar/cli"), Imports: []string{m("sidecar")}},
		m("sidecar/upstream"): {ImportPath: m("sidecar/upstream"), Imports: []string{m("sidecar/wire")}},
		m("sidecar/held"):     {ImportPath: m("sidecar/held"), Imports: []string{m("sidecar/upstream"), m("sidecar")}},
	}
	got = violations(rooms, arrow{name: "t", from: []string{"sidecar"}, except: []string{"sidecar/cli"}, banned: []string{"=sidecar"}})
	want = []violation{{from: m("sidecar/held"), banned: m("sidecar"), chain: []string{m("sidecar/held"), m("sidecar")}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("=sidecar with except:\n got %v\nwant %v", got, want)
	}
}

// The engine knows no transport: no file of the package sidecar (its tests aside) imports net/http or
// starts a process, and the tool servers' processes and connections are sidecar/upstream's.
func TestEngineKnowsNoTransport(t *testing.T) {
	for _, tags := range []string{"", "integration"} {
		engine, ok := load(t, tags)[module+"/sidecar"]
		if !ok {
			t.Fatalf("tags %q: no package %s/sidecar", tags, module)
		}
		for _, imp := range engine.Imports {
			switch imp {
			case "net", "net/http", "os/exec", module + "/sidecar/toolserver":
				t.Errorf("tags %q: the engine (sidecar) imports %s: how a tool server or a client is reached belongs to sidecar/upstream or sidecar/front", tags, short(imp))
			}
		}
	}
}

// short drops the module path from import paths in a message.
func short(s string) string { return strings.ReplaceAll(s, module+"/", "") }

type violation struct {
	from, banned string
	chain        []string
}

// violations lists, for each package under a rule's from folders, the banned packages it depends on,
// each with the shortest chain of imports that leads there (breadth-first over the import graph). A
// package may always import its own room: with from "" (the whole module) and banned "cmd", cmd's test
// binary may import cmd; with from "internal/syncbuf" and banned "" (the module), syncbuf's own test may
// import syncbuf.
func violations(graph map[string]pkg, a arrow) []violation {
	var out []violation
	reported := map[string]bool{}
	for _, p := range sorted(graph) {
		self := graph[p]
		owner := p
		if self.ForTest != "" {
			owner = self.ForTest
		}
		owner = strings.TrimSuffix(owner, ".test") // the test binary's main package
		room, ok := roomOf(owner, a.from)
		if self.Standard || !ok || underAny(owner, a.except) {
			continue
		}
		prev := map[string]string{p: ""}
		queue := []string{p}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, next := range graph[cur].Imports {
				if _, seen := prev[next]; seen || graph[next].Standard {
					continue
				}
				prev[next] = cur
				if banned(owner, room, next, a.banned) {
					key := owner + " " + next
					if !reported[key] { // once per pair: the package, its test variant and test binary say the same
						reported[key] = true
						out = append(out, violation{from: owner, banned: next, chain: chain(prev, next)})
					}
					continue // the first banned package on a path is the one to name
				}
				queue = append(queue, next)
			}
		}
	}
	return out
}

// roomOf returns the folder of from that holds the package.
func roomOf(path string, from []string) (string, bool) {
	for _, f := range from {
		if underAny(path, []string{f}) {
			return f, true
		}
	}
	return "", false
}

// banned reports whether next, reached from owner (in the folder room), is under a banned folder and is
// not part of owner's own room.
func banned(owner, room, next string, bannedFolders []string) bool {
	for _, b := range bannedFolders {
		if !underAny(next, []string{b}) {
			continue
		}
		if underAny(owner, []string{b}) && underAny(next, []string{room}) {
			continue // the room's own packages
		}
		return true
	}
	return false
}

func chain(prev map[string]string, last string) []string {
	var c []string
	for p := last; p != ""; p = prev[p] {
		c = append(c, p)
	}
	slices.Reverse(c)
	return c
}

func sorted(graph map[string]pkg) []string {
	keys := make([]string, 0, len(graph))
	for k := range graph {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// underAny reports whether an import path is one of folders or below it. A folder without a dot is
// module-relative ("" is the whole module); one with a dot is another module's path; "=folder" is that
// package alone.
func underAny(path string, folders []string) bool {
	for _, f := range folders {
		if one, ok := strings.CutPrefix(f, "="); ok {
			p, _, _ := strings.Cut(path, " ")
			if p == module+"/"+one {
				return true
			}
			continue
		}
		if strings.Contains(f, ".") {
			if path == f || strings.HasPrefix(path, f+"/") {
				return true
			}
			continue
		}
		if under(path, module, f) {
			return true
		}
	}
	return false
}

func under(path, module, folder string) bool {
	path, _, _ = strings.Cut(path, " ") // "p [q.test]" is p's test variant
	root := module
	if folder != "" {
		root = module + "/" + folder
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

// watchSources reads the modification time of every folder and Go file of the module, and of go.mod:
// go test caches a result by the files the test itself opened, and `go list` runs in another process, so
// without this a cached pass would hide a new import.
func watchSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(path, ".go") || d.Name() == "go.mod" {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("reading the module's sources under %s: %v", root, err)
	}
}

// load runs `go list -deps -test -json ./...` at the module root and returns the packages by import path.
func load(t *testing.T, tags string) map[string]pkg {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	watchSources(t, root)
	args := []string{"list", "-deps", "-test", "-e", "-json=ImportPath,Imports,ForTest,Standard,Error"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", root, err, stderr.Bytes())
	}
	graph := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			pkg
			Error *struct{ Err string }
		}
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: package %s: %s", p.ImportPath, p.Error.Err)
		}
		graph[p.ImportPath] = p.pkg
	}
	if _, ok := graph[module+"/receipts/canon"]; !ok {
		t.Fatalf("go list in %s did not list %s/receipts/canon: is this the module root?", root, module)
	}
	return graph
}
