package agent

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestTaskNameIsIDDashSlot(t *testing.T) {
	if got := api.TaskName("web", 12); got != "web-12" {
		t.Errorf("taskName = %q, want web-12", got)
	}
}

func TestIsTaskNameMatchesTaskNameOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		id   string
		slot int
		want bool
	}{
		{"web-12", "web", 12, true},
		{"web-12", "web", 1, false},
		{"web-1", "web", 12, false},
		{"web-12-old", "web", 12, false},
		{"webx-12", "web", 12, false},
		{"web-", "web", 0, false},
		{"web", "web", 1, false},
		{"web-0", "web", 0, false},
		{"a-b-3", "a-b", 3, true},
	} {
		if got := api.IsTaskName(c.name, c.id, c.slot); got != c.want || got && api.TaskName(c.id, c.slot) != c.name {
			t.Errorf("isTaskName(%q, %q, %d) = %v, want %v", c.name, c.id, c.slot, got, c.want)
		}
	}
}
