package registry

import (
	"strconv"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

// task builds a container in slot (0 means no slot label) with a state and
// a health.
func task(name string, slot int, state, health string) api.Task {
	labels := map[string]string{api.LabelController: "web"}
	if slot > 0 {
		labels[api.LabelSlot] = strconv.Itoa(slot)
	}
	return api.Task{ID: "id-" + name, Name: name, Labels: labels, State: state, Health: health}
}

func names(tasks []api.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.Name
	}
	return out
}

func TestTaskNameIsIDDashSlot(t *testing.T) {
	if got := taskName("web", 12); got != "web-12" {
		t.Errorf("taskName = %q, want web-12", got)
	}
}
