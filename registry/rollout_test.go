package registry

// Table tests of the rolling update: the bounds, the order, pause,
// OnDelete, a change and a scale in the middle, and the Progressing
// condition.

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// outdatedTask is a running, available container of web in slot, of an
// older template.
func outdatedTask(slot int) api.Task {
	return with(ours(slot), func(t *api.Task) {
		t.ID += "-0ld"
		t.Labels[api.LabelTemplateHash] = "0ld0ld0ld0"
	})
}

// fresh is a container of the current template that has just started:
// not available with minReadySeconds above 0.
func fresh(slot int) api.Task {
	return with(ours(slot), func(t *api.Task) { t.StartedAt, t.Created = planNow, planNow })
}

// renamedOut is an outdated container of slot renamed out for its
// successor.
func renamedOut(slot int) api.Task {
	return with(outdatedTask(slot), func(t *api.Task) { t.Name = outdatedName("web", slot, t.ID) })
}

func rolling(replicas int, fn func(*api.ReplicationControllerState)) *api.ReplicationController {
	rc := newController("web", replicas)
	rc.DesiredState.MinReadySeconds = 5
	if fn != nil {
		fn(&rc.DesiredState)
	}
	return rc
}

func strategy(typ string, surge, unavailable intstr.IntOrString) func(*api.ReplicationControllerState) {
	return func(ds *api.ReplicationControllerState) {
		ds.UpdateStrategy = &api.UpdateStrategy{Type: typ, MaxSurge: &surge, MaxUnavailable: &unavailable}
	}
}

func TestPlanRollout(t *testing.T) {
	one, zero := intstr.FromInt(1), intstr.FromInt(0)
	startFirst := strategy(api.RollingUpdate, one, zero)
	tests := []struct {
		name                      string
		spec                      *api.ReplicationController
		tasks                     []api.Task
		state                     controllerState
		creates, deletes, renames []string
	}{
		{
			name:    "the default replaces one container at a time, stopping it first, highest slot first",
			spec:    rolling(3, nil),
			tasks:   []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3)},
			deletes: []string{"web-3"}, creates: []string{"web-3"},
		},
		{
			name:  "the next waits until the successor is available",
			spec:  rolling(3, nil),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), fresh(3)},
		},
		{
			name:    "then goes on",
			spec:    rolling(3, nil),
			tasks:   []api.Task{outdatedTask(1), outdatedTask(2), ours(3)},
			deletes: []string{"web-2"}, creates: []string{"web-2"},
		},
		{
			name:    "an outdated container that is not available goes first",
			spec:    rolling(3, nil),
			tasks:   []api.Task{outdatedTask(1), with(outdatedTask(2), func(t *api.Task) { t.Health = api.HealthUnhealthy }), ours(3)},
			deletes: []string{"web-2"}, creates: []string{"web-2"},
		},
		{
			name:  "but not while a successor is not available yet",
			spec:  rolling(3, nil),
			tasks: []api.Task{outdatedTask(1), with(outdatedTask(2), func(t *api.Task) { t.Health = api.HealthUnhealthy }), fresh(3)},
		},
		{
			name: "outdated containers merely not available yet (minReadySeconds) do not all go at once",
			spec: rolling(3, nil),
			tasks: []api.Task{
				with(outdatedTask(1), func(t *api.Task) { t.StartedAt = planNow }),
				with(outdatedTask(2), func(t *api.Task) { t.StartedAt = planNow }),
				with(outdatedTask(3), func(t *api.Task) { t.StartedAt = planNow }),
			},
			deletes: []string{"web-3"}, creates: []string{"web-3"},
		},
		{
			name:    "a surge starts the successor first under the slot's name, the old one renamed out",
			spec:    rolling(3, startFirst),
			tasks:   []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3)},
			renames: []string{"web-3->" + outdatedName("web", 3, outdatedTask(3).ID)}, creates: []string{"web-3"},
		},
		{
			name:  "the surge is used up until the successor is available",
			spec:  rolling(3, startFirst),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), renamedOut(3), fresh(3)},
		},
		{
			name:    "an available successor lets the renamed one go and the next slot surge",
			spec:    rolling(3, startFirst),
			tasks:   []api.Task{outdatedTask(1), outdatedTask(2), renamedOut(3), ours(3)},
			deletes: []string{outdatedName("web", 3, outdatedTask(3).ID)},
			renames: []string{"web-2->" + outdatedName("web", 2, outdatedTask(2).ID)}, creates: []string{"web-2"},
		},
		{
			name: "percentages: a quarter of 8 surges, rounded up",
			spec: rolling(8, strategy(api.RollingUpdate, intstr.FromString("25%"), intstr.FromString("0%"))),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3), outdatedTask(4),
				outdatedTask(5), outdatedTask(6), outdatedTask(7), outdatedTask(8)},
			renames: []string{
				"web-8->" + outdatedName("web", 8, outdatedTask(8).ID),
				"web-7->" + outdatedName("web", 7, outdatedTask(7).ID),
			},
			creates: []string{"web-7", "web-8"},
		},
		{
			name: "percentages: a quarter of 8 may be unavailable, rounded down",
			spec: rolling(8, strategy(api.RollingUpdate, intstr.FromInt(0), intstr.FromString("30%"))),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3), outdatedTask(4),
				outdatedTask(5), outdatedTask(6), outdatedTask(7), outdatedTask(8)},
			deletes: []string{"web-7", "web-8"}, creates: []string{"web-7", "web-8"},
		},
		{
			name:  "paused holds the rollout",
			spec:  rolling(3, func(ds *api.ReplicationControllerState) { ds.Paused = true }),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3)},
		},
		{
			name:    "paused, a scale-up still works, with the current template",
			spec:    rolling(4, func(ds *api.ReplicationControllerState) { ds.Paused = true }),
			tasks:   []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3)},
			creates: []string{"web-4"},
		},
		{
			name:  "OnDelete leaves running containers alone",
			spec:  rolling(3, strategy(api.OnDelete, zero, one)),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3)},
		},
		{
			name:    "a scale-down during a rollout removes outdated containers first",
			spec:    rolling(2, nil),
			tasks:   []api.Task{outdatedTask(1), ours(2), outdatedTask(3), ours(4)},
			deletes: []string{"web-1", "web-3"},
		},
		{
			name:    "a scale-up during a rollout creates with the current template",
			spec:    rolling(4, nil),
			tasks:   []api.Task{outdatedTask(1), outdatedTask(2), fresh(3)},
			creates: []string{"web-4"},
		},
		{
			name:    "a second change mid-rollout: the intermediate template is outdated too",
			spec:    rolling(2, nil),
			tasks:   []api.Task{with(ours(1), func(t *api.Task) { t.Labels[api.LabelTemplateHash] = "m1dd1em1dd" }), outdatedTask(2)},
			deletes: []string{"web-2"}, creates: []string{"web-2"},
		},
		{
			name:  "no step while creates wait out a backoff: a failing template takes nothing more away",
			spec:  rolling(3, nil),
			tasks: []api.Task{outdatedTask(1), outdatedTask(2), outdatedTask(3)},
			state: controllerState{createBackoff: backoff{delay: time.Second, until: planNow.Add(time.Second), steps: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := planInput{
				id: "web", spec: tt.spec, hash: webHash, revision: 30, createRevision: 1,
				tasks: tt.tasks, state: tt.state, now: planNow, registryID: testRegistryID, burst: 50,
			}
			d := plan(in)
			got := createNames(d)
			slices.Sort(got)
			if !slices.Equal(got, tt.creates) {
				t.Errorf("creates = %v, want %v", got, tt.creates)
			}
			if got, want := deleteNames(d), sorted(tt.deletes); !slices.Equal(got, want) {
				t.Errorf("deletes = %v, want %v", got, want)
			}
			if got := renameNames(d); !slices.Equal(got, tt.renames) {
				t.Errorf("renames = %v, want %v", got, tt.renames)
			}
			live := len(tt.tasks) - len(d.deletes) + len(d.creates)
			surge, unavailable := tt.spec.DesiredState.Strategy().Bounds(tt.spec.DesiredState.Replicas)
			if max := max(len(tt.tasks), tt.spec.DesiredState.Replicas+surge); live > max {
				t.Errorf("%d live containers after the step, want at most %d", live, max)
			}
			availableAfter := 0
			for _, task := range withoutTasks(tt.tasks, d.deletes) {
				if available(task, 5*time.Second, planNow) {
					availableAfter++
				}
			}
			if floor := tt.spec.DesiredState.Replicas - unavailable; availableAfter < floor && availableAfter < countAvailable(tt.tasks, func(t api.Task) bool { return available(t, 5*time.Second, planNow) }) {
				t.Errorf("%d available after the step, want at least %d", availableAfter, floor)
			}
			for _, c := range d.creates {
				if c.Labels[api.LabelTemplateHash] != webHash {
					t.Errorf("%s is created with template %s, want the current %s", c.Name, c.Labels[api.LabelTemplateHash], webHash)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestProgressingCondition(t *testing.T) {
	spec := rolling(2, func(ds *api.ReplicationControllerState) {
		d := 60
		ds.UpdateStrategy = &api.UpdateStrategy{ProgressDeadlineSeconds: &d}
	})
	in := planInput{id: "web", spec: spec, hash: webHash, now: planNow}

	starting := with(ours(2), func(t *api.Task) { t.Health = api.HealthStarting })
	c, r, next := progressing(in, []api.Task{outdatedTask(1), starting}, rolloutProgress{})
	if c.Reason != api.ReasonRollingUpdate || c.Status != "True" || next != time.Minute {
		t.Errorf("rolling: %+v, next look in %s; want True RollingUpdate and a look at the deadline", c, next)
	}

	in.now = planNow.Add(61 * time.Second) // nothing moved
	c, r, _ = progressing(in, []api.Task{outdatedTask(1), starting}, r)
	if c.Reason != api.ReasonProgressDeadlineExceeded || c.Status != "False" {
		t.Errorf("stalled: %+v, want False ProgressDeadlineExceeded", c)
	}

	in.now = planNow.Add(62 * time.Second) // the successor is available: progress
	c, r, _ = progressing(in, []api.Task{outdatedTask(1), ours(2)}, r)
	if c.Reason != api.ReasonRollingUpdate || c.Status != "True" {
		t.Errorf("moving again: %+v, want True RollingUpdate", c)
	}

	c, r, _ = progressing(in, []api.Task{ours(1), ours(2)}, r)
	if c.Reason != api.ReasonRolloutComplete || !r.done || r.started != planNow {
		t.Errorf("done: %+v, %+v; want RolloutComplete, started at the first look", c, r)
	}
}

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
			h := newHarness(t, Options{})
			rc := newController("web", 3)
			rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &tt.surge, MaxUnavailable: &tt.unavailable}
			h.setSpec(rc, 10)
			if err := h.sync(t, "web"); err != nil {
				t.Fatal(err)
			}
			next := newController("web", 3)
			next.DesiredState.UpdateStrategy = rc.DesiredState.UpdateStrategy
			next.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
			h.setSpec(next, 11)
			want := api.TemplateHash(&next.DesiredState.TaskTemplate)

			for i := 0; ; i++ {
				if i == 20 {
					t.Fatalf("not rolled out after 20 syncs: %v", names(h.fake.Tasks()))
				}
				if err := h.sync(t, "web"); err != nil {
					t.Fatal(err)
				}
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
	h := newHarness(t, Options{SyncPeriod: time.Hour})
	h.run(t)
	h.create(t, newController("web", 3))
	h.waitForNames(t, "web-1", "web-2", "web-3")
	next := newController("web", 3)
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
