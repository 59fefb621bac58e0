// Package version is the one line "rcctl version" and
// "replication-manager --version" print: the module version, and the VCS
// revision and time the go command stamped into the binary.
package version

import (
	"runtime/debug"
	"strings"
)

// String is the version line of the program called name, from the build
// information of the running binary.
func String(name string) string {
	info, _ := debug.ReadBuildInfo()
	return Format(name, info)
}

// Format is the version line of the program called name built as info
// says: "rcctl (devel) revision 1a2b3c4 2026-12-01T22:00:00Z", with
// "modified" appended when the work tree had uncommitted changes. A binary
// built without VCS information (go test, a build outside the repository)
// has only the module version; one without build information at all says
// "unknown".
func Format(name string, info *debug.BuildInfo) string {
	if info == nil {
		return name + " unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)" // test binaries leave it empty
	}
	settings := make(map[string]string)
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	parts := []string{name, v}
	if rev := settings["vcs.revision"]; rev != "" {
		parts = append(parts, "revision", shortRevision(rev))
	}
	if t := settings["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	if settings["vcs.modified"] == "true" {
		parts = append(parts, "modified")
	}
	return strings.Join(parts, " ")
}

// shortRevision is a revision abbreviated as git abbreviates it by default,
// to seven hex digits.
func shortRevision(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}
