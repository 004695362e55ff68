package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// TestREADMESeveralServers: the README's several-servers example and its
// YAML twin say the same settings, member for member; that check finds
// both sound once keys and slip exist is TestExampleSettings' (their
// entries say sound).
func TestREADMESeveralServers(t *testing.T) {
	blocks := readmeBlocks(t, "several-servers")
	var got []*settings.Settings
	for _, b := range blocks {
		text := strings.ReplaceAll(b.body, "<thumbprint>", "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
		s, warnings, err := settings.Parse(filepath.Join("/home/you/files-agent", "executor."+b.kind), []byte(text))
		if err != nil {
			t.Fatalf("README line %d (%s): %v", b.line, b.kind, err)
		}
		if len(warnings) != 0 {
			t.Errorf("README line %d (%s): warnings %v", b.line, b.kind, warnings)
		}
		if s.Servers == nil || s.Servers["fs"].Stdio == nil || s.Servers["web"].HTTP == nil {
			t.Errorf("README line %d (%s): not a stdio fs and an HTTP web server: %+v", b.line, b.kind, s.Servers)
		}
		s.File = ""
		got = append(got, s)
	}
	if len(blocks) != 2 || blocks[0].kind != "json" || blocks[1].kind != "yaml" {
		t.Fatalf("want the JSON example and its YAML twin, marked; found %d blocks", len(blocks))
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("the JSON and the YAML say other settings:\n%+v\n%+v", got[0], got[1])
	}
}
