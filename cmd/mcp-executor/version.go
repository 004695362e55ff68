package main

import (
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=…" (the
// Dockerfile does); "" when nothing was stamped in, and the build
// information says which version this is.
var version = ""

// versionText is the stamped version; or else the main module's version
// from the build information: the tag `go install …@v1.2.3` fetched
// (v1.2.3), or "(devel)" for a build from a checkout, with the VCS
// revision when the build recorded one (and "modified" for local
// changes); "unknown" when the binary holds no build information.
func versionText(stamped string, info *debug.BuildInfo, ok bool) string {
	if stamped != "" {
		return stamped
	}
	if !ok || info == nil || info.Main.Version == "" {
		return "unknown"
	}
	v := info.Main.Version
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	// A tagged or pseudo-version already names its commit; "(devel)" does not.
	if revision != "" && !strings.Contains(v, shortRevision(revision)) {
		v += " revision " + revision
	}
	if modified == "true" && !strings.HasSuffix(v, "+dirty") {
		v += " (modified)"
	}
	return v
}

// shortRevision is the 12 characters of a revision a pseudo-version holds.
func shortRevision(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
