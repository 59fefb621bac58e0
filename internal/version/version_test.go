package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"},
			{Key: "vcs.time", Value: "2026-12-01T22:00:00Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"committed", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")},
			"rcctl (devel) revision 1a2b3c4 2026-12-01T22:00:00Z"},
		{"modified", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			"rcctl (devel) revision 1a2b3c4 2026-12-01T22:00:00Z modified"},
		{"a tagged module without VCS", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			"rcctl v1.2.3"},
		{"a test binary", &debug.BuildInfo{}, "rcctl (devel)"},
		{"no build information", nil, "rcctl unknown"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Format("rcctl", tt.info); got != tt.want {
				t.Errorf("Format() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStringNamesTheProgram(t *testing.T) {
	t.Parallel()
	if got := String("replication-manager"); !strings.HasPrefix(got, "replication-manager ") {
		t.Errorf("String() = %q, want it to start with the program's name", got)
	}
}
