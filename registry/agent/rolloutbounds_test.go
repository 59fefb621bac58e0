package agent_test

// A rolling update through a whole host (the external harness): its bounds
// hold at every step, and it goes on by itself, without a resync.

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestARollingUpdateThroughTheManagerKeepsItsBounds(t *testing.T) {
	for _, tt := range []struct {
		name                string
		surge, unavailable  intstr.IntOrString
		maxLive, minRunning int
	}{
		{"stop first", intstr.FromInt(0), intstr.FromInt(1), 3, 2},
		{"start first", intstr.FromInt(1), intstr.FromInt(0), 4, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, roles.Options{})
			rc := newController("web", 3)
			rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &tt.surge, MaxUnavailable: &tt.unavailable}
			h.setSpec(rc)
			if err := h.sync(t, "web"); err != nil {
				t.Fatal(err)
			}
			next := newController("web", 3)
			next.DesiredState.UpdateStrategy = rc.DesiredState.UpdateStrategy
			next.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
			h.setSpec(next)
			want := api.TemplateHash(&next.DesiredState.TaskTemplate)

			for i := 0; ; i++ {
				if i == 20 {
					t.Fatalf("not rolled out after 20 syncs: %v", names(h.fake.Tasks()))
				}
				if err := h.sync(t, "web"); err != nil {
					t.Fatal(err)
				}
				// past the monitor: a new container counts for the next step
				h.clock.Advance(api.DefaultMonitorSeconds * time.Second)
				tasks := h.fake.Tasks()
				if len(tasks) > tt.maxLive {
					t.Fatalf("sync %d: %d live containers %v, want at most %d", i, len(tasks), names(tasks), tt.maxLive)
				}
				// the fake's containers are ready at once, so every running
				// one is available
				if len(tasks) < tt.minRunning {
					t.Fatalf("sync %d: %d running, want at least %d", i, len(tasks), tt.minRunning)
				}
				done := len(tasks) == 3
				for _, task := range tasks {
					done = done && task.Labels[api.LabelTemplateHash] == want
				}
				if done {
					break
				}
			}
			if got := names(h.fake.Tasks()); !slices.Equal(got, []string{"web-1", "web-2", "web-3"}) {
				t.Errorf("containers = %v, want web-1..3", got)
			}
			st := h.status(t, "web")
			if c := st.FindCondition(api.ConditionProgressing); st.UpdatedReplicas != 3 || c == nil || c.Reason != api.ReasonRolloutComplete {
				t.Errorf("status = %+v, want 3 updated and RolloutComplete", st)
			}
		})
	}
}

func TestARollingUpdateGoesOnByItselfWithoutAResync(t *testing.T) {
	h := newHarness(t, roles.Options{SyncPeriod: time.Hour})
	h.run(t)
	noMonitor := func(rc *api.ReplicationController) *api.ReplicationController {
		rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MonitorSeconds: new(0)} // the steps follow at once
		return rc
	}
	h.create(t, noMonitor(newController("web", 3)))
	h.waitForNames(t, "web-1", "web-2", "web-3")
	next := noMonitor(newController("web", 3))
	next.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
	spec, err := h.store.GetController(t.Context(), "web")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.UpdateController(t.Context(), next, spec.ModRevision); err != nil {
		t.Fatal(err)
	}
	want := api.TemplateHash(&next.DesiredState.TaskTemplate)
	testpoll.Until(t, waitTimeout, "every replica on the new template, and the status saying so", func() bool {
		for _, task := range h.fake.Tasks() {
			if task.Labels[api.LabelTemplateHash] != want {
				return false
			}
		}
		st := h.status(t, "web")
		c := st.FindCondition(api.ConditionProgressing)
		return st.UpdatedReplicas == 3 && c != nil && c.Reason == api.ReasonRolloutComplete
	})
}

// watchedCreates hands each create to onCreate before the engine makes it.
type watchedCreates struct {
	*taskcontrol.Fake
	onCreate func(api.TaskSpec)
}

func (w *watchedCreates) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	if w.onCreate != nil {
		w.onCreate(spec)
	}
	return w.Fake.CreateTask(ctx, spec)
}

// A leader that remembers no write of its own learns from the node's
// report alone that a slot may run two containers: the node writes the
// slot into its report's startedFirst before it creates the successor
// next to the outdated container, and drops it once the outdated one is
// gone (decide counts it; make prop, seed 14811533018944992633).
func TestANodeReportsASuccessorStartedFirstBeforeItCreatesIt(t *testing.T) {
	watch := &watchedCreates{}
	h := newHarness(t, roles.Options{TaskControl: watch})
	watch.Fake = h.fake
	rc := newController("web", 1)
	one, zero := intstr.FromInt(1), intstr.FromInt(0)
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &one, MaxUnavailable: &zero}
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}

	var atCreate []int
	creates := 0
	watch.onCreate = func(api.TaskSpec) {
		creates++
		if r := h.report(t, "web"); r != nil {
			atCreate = r.StartedFirst
		}
	}
	next := newController("web", 1)
	next.DesiredState.UpdateStrategy = rc.DesiredState.UpdateStrategy
	next.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
	h.setSpec(next)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if creates != 1 || !slices.Equal(atCreate, []int{1}) {
		t.Fatalf("the successor's create (%d creates) saw the report's startedFirst %v, want [1]", creates, atCreate)
	}
	if got := h.report(t, "web").StartedFirst; !slices.Equal(got, []int{1}) {
		t.Errorf("with both containers running, the report's startedFirst is %v, want [1]", got)
	}

	h.clock.Advance(api.DefaultMonitorSeconds * time.Second) // the successor is available: the old one goes
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := names(h.fake.Tasks()); !slices.Equal(got, []string{"web-1"}) {
		t.Fatalf("containers %v, want the successor alone", got)
	}
	if got := h.report(t, "web").StartedFirst; len(got) > 0 {
		t.Errorf("with the successor alone, the report's startedFirst is %v, want none", got)
	}
}

// A new container that exits within its monitor window, its exit not seen
// by the node yet (its event late, as on a loaded engine), counts for no
// step: the leader waits for the node's word that it ran through the
// window, and the node, asking its engine at the window's end, learns of
// the exit instead. The two old containers keep running.
func TestARolloutStepWaitsForTheEnginesWordThatTheNewContainerRanThroughItsWindow(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 3)) // stop first, one at a time
	h.syncTimes(t, "web", 2)
	h.clock.Advance(time.Minute)
	h.syncTimes(t, "web", 1) // the node vouches for the old ones
	next := newController("web", 3)
	next.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
	h.setSpec(next)
	want := api.TemplateHash(&next.DesiredState.TaskTemplate)
	h.syncTimes(t, "web", 2) // the first step: one old one stopped, its successor started
	var fresh []string
	for _, task := range h.fake.Tasks() {
		if task.Labels[api.LabelTemplateHash] == want {
			fresh = append(fresh, task.ID)
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("containers %v after the first step, want one of the new template", names(h.fake.Tasks()))
	}
	h.fake.SetState(fresh[0], api.StateExited, 1) // the cache is not told: no events, no list
	h.clock.Advance(api.DefaultMonitorSeconds * time.Second)

	for range 2 {
		if err := h.step(t.Context(), "web"); err != nil {
			t.Fatal(err)
		}
		old := 0
		for _, task := range h.fake.Tasks() {
			if task.Labels[api.LabelTemplateHash] != want && task.State == api.StateRunning {
				old++
			}
		}
		if old != 2 {
			t.Fatalf("%d old containers running (%v), want 2: a step was taken on a new container that had exited", old, names(h.fake.Tasks()))
		}
	}
	if !slices.Contains(h.fake.Calls(), "inspect "+fresh[0]) {
		t.Errorf("calls %v: the node never asked its engine about the new container", h.fake.Calls())
	}
}
