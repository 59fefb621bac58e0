package registry

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

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
