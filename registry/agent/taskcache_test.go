package agent

import (
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

func owned(id, rc, state string) api.Task {
	return api.Task{ID: id, Name: id, State: state, Labels: map[string]string{api.LabelController: rc}}
}

func TestTaskCacheReplaceReportsOnlyControllersThatChanged(t *testing.T) {
	c := newTaskCache()
	now := time.Now()
	c.replace([]api.Task{
		owned("a", "web", api.StateRunning),
		owned("b", "api", api.StateRunning),
		owned("c", "quiet", api.StateRunning),
		{ID: "x", Name: "not-ours", Labels: map[string]string{"name": "x"}},
	}, c.startList(), now)

	changed := c.replace([]api.Task{
		owned("a", "web", api.StateExited), // web: state changed
		owned("c", "quiet", api.StateRunning),
		owned("d", "db", api.StateRunning), // db: new; api: b is gone
	}, c.startList(), now)
	slices.Sort(changed)
	if want := []string{"api", "db", "web"}; !slices.Equal(changed, want) {
		t.Errorf("changed = %v, want %v", changed, want)
	}
	if tasks, _ := c.list("api"); len(tasks) != 0 {
		t.Errorf("api still has %v", tasks)
	}
	if tasks, _ := c.list("x"); len(tasks) != 0 {
		t.Errorf("a container without the ownership label was cached: %v", tasks)
	}
	if tasks, _ := c.list("web"); len(tasks) != 1 || tasks[0].State != api.StateExited {
		t.Errorf("web = %v, want a exited", tasks)
	}
}
