package agent

import (
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/api"
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
	a, _ := in.assigned.Get(2)
	a.Replace = ours(2).ID
	in.assigned = in.assigned.With(2, a)
	a, _ = in.assigned.Get(3)
	a.Replace = "an-earlier-container"
	in.assigned = in.assigned.With(3, a)

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
	}
	for slot, a := range assignedSlots(nil, 2, webHash).All() {
		a.Replace = ours(slot).ID
		in.assigned = in.assigned.With(slot, a)
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
