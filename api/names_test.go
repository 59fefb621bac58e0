package api

import (
	"strings"
	"testing"
)

func TestTaskNames(t *testing.T) {
	m := &sidecarController().DesiredState.TaskTemplate.DesiredState.Manifest
	for _, tt := range []struct{ got, want string }{
		{TaskName("web", 3), "web-3"},
		{ContainerName("web", 3, m, 0), "web-3"},
		{ContainerName("web", 3, m, 1), "web-3.prober"},
		{SidecarName("a.b-1", 12, "log-shipper"), "a.b-1-12.log-shipper"},
		{EmptyDirVolumeName("web", 3, "scratch"), "web-3.scratch"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestParseTaskName(t *testing.T) {
	tests := []struct {
		id, name string
		slot     int
		part     string
		ok       bool
	}{
		{"web", "web-1", 1, "", true},
		{"web", "web-120", 120, "", true},
		{"web", "web-3.prober", 3, "prober", true},
		{"web", "web-3.scratch", 3, "scratch", true}, // a volume reads alike
		{"a-1.b", "a-1.b-2", 2, "", true},
		{"a-1.b", "a-1.b-2.side-car", 2, "side-car", true},
		{"a", "a-1.b-2", 1, "b-2", true}, // read with the other id: see the doc comment

		// names out of a slot, as the manager renames containers today
		{"web", "web-dead-0123456789ab", 0, "", false},
		{"web", "web-2-old-0123456789ab", 0, "", false},
		// other controllers and non-names
		{"web", "web2-1", 0, "", false},
		{"web", "webx-1", 0, "", false},
		{"web", "api-1", 0, "", false},
		{"web-1", "web-1", 0, "", false},
		{"web", "web", 0, "", false},
		{"web", "web-", 0, "", false},
		{"web", "web-0", 0, "", false},
		{"web", "web--1", 0, "", false},
		{"web", "web-+1", 0, "", false},
		{"web", "web-01", 0, "", false},
		{"web", "web-1.", 0, "", false},
		{"web", "web-1.Prober", 0, "", false},
		{"web", "web-1.a.b", 0, "", false},
		{"web", "web-1.-a", 0, "", false},
		{"web", "web-1." + strings.Repeat("a", 64), 0, "", false},
		{"web", "web-99999999999999999999", 0, "", false},
		{"", "-1", 0, "", false},
	}
	for _, tt := range tests {
		slot, part, ok := ParseTaskName(tt.id, tt.name)
		if slot != tt.slot || part != tt.part || ok != tt.ok {
			t.Errorf("ParseTaskName(%q, %q) = %d, %q, %v; want %d, %q, %v", tt.id, tt.name, slot, part, ok, tt.slot, tt.part, tt.ok)
		}
	}
}

// The parser reads back every name the namers make.
func TestParseTaskNameReadsTheNamers(t *testing.T) {
	for _, id := range []string{"web", "a-1.b", "W_x.y-2"} {
		for _, slot := range []int{1, 9, 10, 100000} {
			if got, part, ok := ParseTaskName(id, TaskName(id, slot)); !ok || got != slot || part != "" {
				t.Errorf("ParseTaskName(%q, TaskName) = %d, %q, %v; want %d", id, got, part, ok, slot)
			}
			for _, name := range []string{"prober", "a", "log-shipper-2"} {
				for _, n := range []string{SidecarName(id, slot, name), EmptyDirVolumeName(id, slot, name)} {
					if got, part, ok := ParseTaskName(id, n); !ok || got != slot || part != name {
						t.Errorf("ParseTaskName(%q, %q) = %d, %q, %v; want %d, %q", id, n, got, part, ok, slot, name)
					}
				}
			}
		}
	}
}
