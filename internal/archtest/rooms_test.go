package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A package of the room list in docs/architecture.md: a line "- `path` — what it is".
var roomLine = regexp.MustCompile("(?m)^- `([a-z0-9/._-]+)` — ")

// TestRoomsListEveryPackage keeps docs/architecture.md true: its list of rooms names every package of the
// module (with the integration tag, which adds test-only packages) and no package that is gone.
func TestRoomsListEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range roomLine.FindAllSubmatch(doc, -1) {
		listed = append(listed, string(m[1]))
	}
	if len(listed) == 0 {
		t.Fatal("docs/architecture.md lists no package: the list form is \"- `path` — what it is\"")
	}
	var packages []string
	for path, p := range load(t, "integration") {
		if p.Standard || p.ForTest != "" || strings.HasSuffix(path, ".test") || strings.HasSuffix(path, "_test") {
			continue
		}
		if rel, ok := strings.CutPrefix(path, module+"/"); ok {
			packages = append(packages, rel)
		}
	}
	for _, p := range packages {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s is not in docs/architecture.md's list of rooms: add a line \"- `%s` — what it is\"", p, p)
		}
	}
	for _, l := range listed {
		if !slices.Contains(packages, l) {
			t.Errorf("docs/architecture.md lists %s, which is no package of the module: remove or rename the line", l)
		}
	}
}
