package agent

import (
	"slices"
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

// A slot is started first when the node runs, or is about to create, two
// or more containers of it; a container without a slot is never counted.
func TestStartedFirstSlotsAreThoseOfTwoOrMoreContainers(t *testing.T) {
	of := func(slots ...string) []api.Task {
		var out []api.Task
		for _, s := range slots {
			out = append(out, api.Task{Labels: map[string]string{api.LabelSlot: s}, State: api.StateRunning})
		}
		return out
	}
	for _, c := range []struct {
		name           string
		active, inits  []api.Task
		creating, want []int
	}{
		{name: "one each", active: of("1", "2", "3"), want: nil},
		{name: "two and three of a slot", active: of("3", "1", "2", "3", "1", "3"), want: []int{1, 3}},
		{name: "one running, one being created", active: of("2"), creating: []int{2, 4}, want: []int{2}},
		{name: "an init container running", active: of("5"), inits: of("5"), want: []int{5}},
		{name: "no slot twice", active: of("none", "none", "0"), want: nil},
	} {
		if got := startedFirstSlots(c.active, c.inits, c.creating); !slices.Equal(got, c.want) {
			t.Errorf("%s: started first %v, want %v", c.name, got, c.want)
		}
	}
}
