package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// The node replaces the task the leader names in the assignment, and no
// other: an unhealthy one it is not told of runs on.
func TestTheNodeReplacesTheTaskItsAssignmentNames(t *testing.T) {
	spec := newController("web", 3)
	sick := func(t *api.Task) { t.Health = api.HealthUnhealthy }
	in := planInput{
		id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1,
		tasks: []api.Task{with(ours(1), sick), with(ours(2), sick), ours(3)}, now: planNow, registryID: testRegistryID, burst: 50,
		templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate},
		assigned:  assignedSlots(nil, 3, webHash),
	}
	a := in.assigned[2]
	a.Replace = ours(2).ID
	in.assigned[2] = a
	a = in.assigned[3]
	a.Replace = "an-earlier-container"
	in.assigned[3] = a

	d := plan(in)
	if got := deleteNames(d); !slices.Equal(got, []string{"web-2"}) {
		t.Errorf("deletes = %v, want web-2 alone", got)
	}
	if got := createNames(d); !slices.Equal(got, []string{"web-2"}) {
		t.Errorf("creates = %v, want web-2", got)
	}
	if len(d.unhealthy) != 1 || d.unhealthy[0].Name != "web-2" {
		t.Errorf("replaced for ill health: %v, want web-2", d.unhealthy)
	}
}

func TestAReplacementWaitsForTheBurst(t *testing.T) {
	spec := newController("web", 2)
	in := planInput{
		id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1,
		tasks: []api.Task{ours(1), ours(2)}, now: planNow, registryID: testRegistryID, burst: 1,
		templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate},
		assigned:  map[int]registry.SlotAssignment{},
	}
	for slot, a := range assignedSlots(nil, 2, webHash) {
		a.Replace = ours(slot).ID
		in.assigned[slot] = a
	}
	d := plan(in)
	if got := deleteNames(d); !slices.Equal(got, []string{"web-1"}) || !d.more {
		t.Errorf("deletes = %v (more %v), want web-1 and more to come: the burst is 1", got, d.more)
	}
}

func TestDryRunShowsUnhealthyTasksReplaced(t *testing.T) {
	rc := dryRunWeb(3, "demo-task:latest")
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{
		Test: api.Command{"/task", "healthcheck"}, OnUnhealthy: api.OnUnhealthyReplace}
	in := dryRunRegistry(rc, dryRunNodes("a", "b"), "a", "b", "a")
	for i := range in.Reports {
		for j := range in.Reports[i].Tasks {
			in.Reports[i].Tasks[j].Health = api.HealthUnhealthy
		}
	}
	in.Spec, in.Revision = rc, 10
	plan, err := leader.DryRun(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"replace web-1 on a (unhealthy (onUnhealthy: replace), stopped first)",
		"replace web-2 on b (unhealthy (onUnhealthy: replace), stopped first)",
		"replace web-3 on a (unhealthy (onUnhealthy: replace), stopped first)",
	}
	if got := dryRunLines(plan); !slices.Equal(got, want) {
		t.Errorf("dry run:\n got %q\nwant %q", got, want)
	}
}

// A cluster of two fake engines and a leader: the tasks of a controller
// that asks are replaced once unhealthy, never more than one slot down at
// once, with Unhealthy in the status and an event each; a controller that
// does not ask keeps its unhealthy tasks.
func TestClusterReplacesUnhealthyTasksOneSlotAtATime(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a", "b"))
	sickly := func(id string, replicas int, onUnhealthy string) *api.ReplicationController {
		rc := newController(id, replicas)
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{
			Test: api.Command{"/task", "healthcheck"}, OnUnhealthy: onUnhealthy}
		return rc
	}
	c.apply(t, sickly("web", 3, api.OnUnhealthyReplace))
	c.apply(t, sickly("db", 1, ""))

	tasksOf := func(id string) map[string]api.Task { // by name, the live ones
		out := map[string]api.Task{}
		for _, n := range c.nodes {
			for _, task := range n.fake.Tasks() {
				if task.Labels[api.LabelController] == id && task.Active() {
					out[task.Name] = task
				}
			}
		}
		return out
	}
	setHealth := func(id, health string) {
		for _, n := range c.nodes {
			for _, task := range n.fake.Tasks() {
				if task.Labels[api.LabelController] == id {
					n.fake.SetHealth(task.ID, health)
				}
			}
		}
	}
	testpoll.Eventually(t, waitTimeout, func() error {
		if web, db := len(tasksOf("web")), len(tasksOf("db")); web != 3 || db != 1 {
			return fmt.Errorf("web runs %d, db %d; want 3 and 1", web, db)
		}
		return nil
	})
	setHealth("web", api.HealthHealthy)
	setHealth("db", api.HealthHealthy)
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.ReadyReplicas != 3 {
			return fmt.Errorf("%d ready, want 3", st.ReadyReplicas)
		}
		return nil
	})
	first := tasksOf("web")
	kept := tasksOf("db")

	// sampled: how many slots at once have no live task (the fakes stop
	// and start at once, so this catches only a gross excess: the bound
	// itself is the property tests'), and whether the status said Unhealthy
	var mu sync.Mutex
	worst, sawUnhealthy := 0, false
	stop := runInBackground(t, func(ctx context.Context) error {
		for ctx.Err() == nil {
			down := 3 - len(tasksOf("web"))
			st, err := c.store.GetStatus(ctx, "web")
			mu.Lock()
			worst = max(worst, down)
			if err == nil && st.FindCondition(api.ConditionUnhealthy) != nil {
				sawUnhealthy = true
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	setHealth("web", api.HealthUnhealthy)
	setHealth("db", api.HealthUnhealthy)
	testpoll.Eventually(t, waitTimeout, func() error {
		now := tasksOf("web")
		for name, task := range first {
			if got, ok := now[name]; !ok || got.ID == task.ID {
				return fmt.Errorf("%s not replaced yet", name)
			}
		}
		return nil
	})
	stop()
	if worst > 1 {
		t.Errorf("%d slots at once without a live task, want at most 1", worst)
	}
	if !sawUnhealthy {
		t.Error("the status never said Unhealthy")
	}
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if cond := st.FindCondition(api.ConditionUnhealthy); cond != nil {
			return fmt.Errorf("Unhealthy %+v after every slot was replaced, want none", cond)
		}
		return nil
	})
	testpoll.Eventually(t, waitTimeout, func() error {
		events, err := c.store.ListEvents(t.Context(), "web")
		if err != nil {
			return err
		}
		n := 0
		for _, ev := range events {
			if ev.Reason == api.ReasonUnhealthyReplaced {
				n++
			}
		}
		if n != 3 {
			return fmt.Errorf("%d %s events, want 3", n, api.ReasonUnhealthyReplaced)
		}
		return nil
	})
	for name, task := range tasksOf("db") {
		if task.ID != kept[name].ID {
			t.Errorf("%s of a controller without onUnhealthy was replaced", name)
		}
	}
}
