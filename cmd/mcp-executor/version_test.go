package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// versionText: a stamped version wins; otherwise the module's version from
// the build information, with the revision a build from a checkout
// recorded (once: a pseudo-version names its commit already).
func TestVersionText(t *testing.T) {
	info := func(v string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/seed-6e06167c/mcp-executor", Version: v}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev = "0bccb391d2df769100851df76911a9a5920d2f92"
	for _, c := range []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"stamped", "1.4.0", info("v1.2.3"), true, "1.4.0"},
		{"go install @v1.2.3", "", info("v1.2.3"), true, "v1.2.3"},
		{"a checkout", "", info("(devel)"), true, "(devel)"},
		{"a checkout with its revision", "", info("(devel)", "vcs", "git", "vcs.revision", rev, "vcs.modified", "false"), true, "(devel) revision " + rev},
		{"local changes", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), true, "(devel) revision " + rev + " (modified)"},
		{"a pseudo-version", "", info("v0.0.0-20261202010000-0bccb391d2df+dirty", "vcs.revision", rev, "vcs.modified", "true"), true, "v0.0.0-20261202010000-0bccb391d2df+dirty"},
		{"no build information", "", nil, false, "unknown"},
	} {
		if got := versionText(c.stamped, c.info, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The binary built here, from a checkout with nothing stamped in, says
// "(devel)" (and the revision, when the build recorded it) to version and
// to --version alike; -v is no version flag.
func TestVersionCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runBin(t, dir, "version")
	if code != 0 || !strings.HasPrefix(out, "mcp-executor (devel)") || strings.Count(out, "\n") != 1 {
		t.Fatalf("version exits %d: %q %q", code, out, errOut)
	}
	if code, again, _ := runBin(t, dir, "--version"); code != 0 || again != out {
		t.Errorf("--version exits %d: %q, want %q", code, again, out)
	}
	if code, _, errOut := runBin(t, dir, "-v"); code != 2 || !strings.Contains(errOut, `unknown subcommand "-v"`) {
		t.Errorf("-v exits %d: %q", code, errOut)
	}
	if code, _, _ := runBin(t, dir, "version", "extra"); code != 2 {
		t.Errorf("version with an argument exits %d", code)
	}
}
