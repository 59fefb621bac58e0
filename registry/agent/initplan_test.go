package agent

// The node's plan and settle of a slot with init containers, as pure
// functions; initcontainers_test.go runs them through a host.

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// initCtr is init container name of web's slot, of web's template.
func initCtr(slot int, name, state string, exitCode int, finished time.Time) api.Task {
	t := with(ctr("web", slot, state, testRegistryID), func(t *api.Task) {
		t.Labels[api.LabelInit], t.Labels[api.LabelContainer] = "true", name
		t.Name = api.InitContainerName("web", slot, name)
		t.ID += "-init-" + name
		t.ExitCode, t.FinishedAt = exitCode, finished
	})
	return t
}

func TestPlanCountsNoInitContainerAndKeepsOnlyTheLastFailureOfAWaitingSlot(t *testing.T) {
	spec := newController("web", 3)
	earlier, later := planNow.Add(-time.Minute), planNow.Add(-time.Second)
	tasks := []api.Task{
		ours(1),
		initCtr(1, "fill", api.StateExited, 0, earlier),      // passed; its removal was cut off
		initCtr(2, "fill", api.StateRunning, 0, time.Time{}), // left running by a node that stopped
		initCtr(3, "fill", api.StateExited, 1, earlier),      // an older failure
		// the last try's failure, kept, which the cache still thinks runs
		initCtr(3, "migrate", api.StateRunning, 0, time.Time{}),
		initCtr(4, "fill", api.StateExited, 3, later), // of a slot no longer here
	}
	in := planInput{id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1, now: planNow, registryID: testRegistryID, burst: 50,
		assigned: assignedSlots(nil, 3, webHash), templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate}}
	in.state.keptInits = map[int]string{3: tasks[4].ID, 4: tasks[5].ID}
	in.tasks, in.inits = splitInits(tasks)
	d := plan(in)
	if !maps.Equal(d.state.keptInits, map[int]string{3: tasks[4].ID}) {
		t.Errorf("kept = %v, want slot 3's alone", d.state.keptInits)
	}
	if got := taskNames(d.active); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("counted %v, want web-1 alone: init containers are never counted", got)
	}
	want := []string{"web-1.init-fill", "web-2.init-fill", "web-3.init-fill", "web-4.init-fill"}
	if got := deleteNames(d); !slices.Equal(got, want) {
		t.Errorf("deletes = %v, want %v (web-3.init-migrate kept for inspection)", got, want)
	}
	if got := createNames(d); !slices.Equal(got, []string{"web-2", "web-3"}) {
		t.Errorf("creates = %v, want the slots without their task", got)
	}
}

func TestASlotWhoseInitContainerMayRunIsStillTheNodes(t *testing.T) {
	spec := newController("web", 1)
	in := planInput{id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1, now: planNow, registryID: testRegistryID, burst: 50,
		assigned: assignedSlots(nil, 1, webHash), templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate}}
	running := initCtr(2, "fill", api.StateRunning, 0, time.Time{}) // slot 2 moved away while it ran
	in.tasks, in.inits = splitInits([]api.Task{ours(1), running})
	d := plan(in)
	if got := deleteNames(d); !slices.Equal(got, []string{"web-2.init-fill"}) {
		t.Fatalf("deletes = %v, want the init container of the slot no longer here", got)
	}
	r := settle(in, d, outcome{deleteErrs: []error{errors.New("delete web-2.init-fill: engine busy")}})
	if got := runSlots(in.assigned, slices.Concat(r.active, r.inits)); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("slots reported after a failed delete = %v, want [1 2]: slot 2's init container may still run", got)
	}
	r = settle(in, d, outcome{deleted: []api.Task{running}})
	if got := runSlots(in.assigned, slices.Concat(r.active, r.inits)); !slices.Equal(got, []int{1}) {
		t.Errorf("slots reported once it is gone = %v, want [1]", got)
	}
}

func TestSettleOfAFailedInitContainer(t *testing.T) {
	spec := newController("web", 1)
	in := planInput{id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1, now: planNow, registryID: testRegistryID, burst: 50,
		assigned: assignedSlots(nil, 1, webHash), templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate}}
	failed := &initFailure{name: "migrate", container: "web-1.init-migrate", id: "c0ffee", slot: 1, exitCode: 3, output: "no config\n"}
	r := settle(in, plan(in), outcome{createErrs: []error{failed}})
	c := r.status.FindCondition(api.ConditionReplicaFailure)
	if c == nil || c.Reason != api.ReasonInitFailed || c.Message != "init container migrate (web-1.init-migrate) exited with code 3; last output:\nno config" {
		t.Fatalf("ReplicaFailure = %+v, want InitFailed naming the container, its code and its output", c)
	}
	if r.state.createBackoff.failures != 0 || r.state.initBackoff.failures != 1 || r.requeueAfter != crashBackoffStart {
		t.Errorf("backoffs: create %d, init %d failures, next look in %s; want the crash-loop backoff's first step, %s",
			r.state.createBackoff.failures, r.state.initBackoff.failures, r.requeueAfter, crashBackoffStart)
	}

	if !maps.Equal(r.state.keptInits, map[int]string{1: "c0ffee"}) {
		t.Errorf("kept = %v, want slot 1's failed init container", r.state.keptInits)
	}

	// within the backoff: no create, the failure stays
	in.state = r.state
	in.state.status = r.status
	in.now = planNow.Add(crashBackoffStart / 2)
	d := plan(in)
	if len(d.creates) != 0 || !d.keepFailure {
		t.Errorf("within the backoff: creates %v, keepFailure %v; want none, and the failure kept", createNames(d), d.keepFailure)
	}
	in.now = planNow.Add(crashBackoffStart)
	if d := plan(in); !slices.Equal(createNames(d), []string{"web-1"}) {
		t.Errorf("after the backoff: creates %v, want web-1 tried again", createNames(d))
	}
}
