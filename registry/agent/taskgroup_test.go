package agent

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// sidecarNames lists the fake's containers by name, with whose network
// each joined (by name).
func sidecarNames(t *testing.T, h *harness) map[string]string {
	t.Helper()
	tasks := h.fake.Tasks()
	byID := map[string]string{}
	for _, c := range tasks {
		byID[c.ID] = c.Name
	}
	out := map[string]string{}
	for _, c := range tasks {
		out[c.Name] = byID[c.JoinedTo]
	}
	return out
}

func TestATaskOfTwoContainersRunsWholeAndComesBackWhole(t *testing.T) {
	h := newHarness(t, Options{})
	rc := demospec.SidecarController("web", "demo-task:latest", 2, nil)
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"web-1": "", "web-1.prober": "web-1", "web-2": "", "web-2.prober": "web-2"}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Fatalf("containers (name: the one whose network it joined) = %v, want %v", got, want)
	}
	if got := volumeNames(h); !slices.Equal(got, []string{"web-1.scratch", "web-2.scratch"}) {
		t.Errorf("volumes = %v, want one emptyDir per task", got)
	}
	if st := h.status(t, "web"); st == nil || st.Replicas != 2 {
		t.Fatalf("status = %+v, want 2 replicas: a task of two containers counts once", st)
	}

	// the sidecar of slot 1 goes: the whole task is replaced
	var first, side string
	for _, c := range h.fake.Tasks() {
		switch c.Name {
		case "web-1":
			first = c.ID
		case "web-1.prober":
			side = c.ID
		}
	}
	if err := h.fake.DeleteTask(t.Context(), side); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the slot's crash backoff starts at 100ms
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Second)
	}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Fatalf("after the sidecar went: containers = %v, want %v", got, want)
	}
	for _, c := range h.fake.Tasks() {
		if c.ID == first {
			t.Errorf("web-1 (%s) still runs: a task whose part went must be replaced whole", first)
		}
	}

	// the controller goes: every container and volume with it
	h.deleteSpec("web")
	for range 2 {
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.fake.Len(); n != 0 {
		t.Errorf("%d containers left after the delete: %v", n, sidecarNames(t, h))
	}
	if got := volumeNames(h); len(got) != 0 {
		t.Errorf("volumes left after the delete: %v", got)
	}
}

func TestAPartWhoseFirstContainerWentIsRemoved(t *testing.T) {
	h := newHarness(t, Options{})
	h.setSpec(demospec.SidecarController("web", "demo-task:latest", 1, nil))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	var oldSide string
	for _, c := range h.fake.Tasks() {
		if c.Name == "web-1" {
			if err := h.fake.DeleteTask(t.Context(), c.ID); err != nil {
				t.Fatal(err)
			}
		}
		if c.Name == "web-1.prober" {
			oldSide = c.ID
		}
	}
	for range 2 {
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Second)
	}
	want := map[string]string{"web-1": "", "web-1.prober": "web-1"}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Fatalf("containers = %v, want %v", got, want)
	}
	for _, c := range h.fake.Tasks() {
		if c.ID == oldSide {
			t.Errorf("the orphaned prober %s still runs", oldSide)
		}
	}
}

func TestTaskStateIsThatOfItsWorstContainer(t *testing.T) {
	tmpl := &demospec.SidecarController("web", "demo-task:latest", 1, nil).DesiredState.TaskTemplate
	hash := api.TemplateHash(tmpl)
	first := api.Task{ID: "f", Name: "web-1", State: api.StateRunning, StartedAt: planNow.Add(-2 * time.Second),
		Labels: map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelTemplateHash: hash}}
	part := func(state, health string) api.Task {
		return api.Task{ID: "p", Name: "web-1.prober", JoinedTo: "f", State: state, Health: health, StartedAt: planNow.Add(-time.Second),
			Labels: map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelContainer: "prober"}}
	}
	templates := map[string]*api.TaskTemplate{hash: tmpl}
	tests := []struct {
		name        string
		tasks       []api.Task
		state       string
		ready       bool
		orphans     int
		startedLate bool
	}{
		{"both run", []api.Task{first, part(api.StateRunning, "")}, api.StateRunning, true, 0, true},
		{"the part is not healthy yet", []api.Task{first, part(api.StateRunning, api.HealthStarting)}, api.StateRunning, false, 0, true},
		{"the part exited", []api.Task{first, part(api.StateExited, "")}, api.StateExited, false, 0, false},
		{"the part is gone", []api.Task{first}, api.StateExited, false, 0, false},
		{"the first is gone", []api.Task{part(api.StateRunning, "")}, "", false, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := groupTasks(tt.tasks, templates, planNow)
			if len(g.orphans) != tt.orphans {
				t.Fatalf("orphans = %v, want %d", g.orphans, tt.orphans)
			}
			if tt.state == "" {
				if len(g.firsts) != 0 {
					t.Fatalf("tasks = %v, want none", g.firsts)
				}
				return
			}
			if len(g.firsts) != 1 || !g.groups["f"] {
				t.Fatalf("tasks = %v (groups %v), want web-1 as a task of several containers", g.firsts, g.groups)
			}
			got := g.firsts[0]
			if got.State != tt.state || got.Ready() != tt.ready {
				t.Errorf("task state %s ready %v, want %s ready %v", got.State, got.Ready(), tt.state, tt.ready)
			}
			if late := got.StartedAt.Equal(planNow.Add(-time.Second)); late != tt.startedLate {
				t.Errorf("task started at %v; want the later start of its containers: %v", got.StartedAt, tt.startedLate)
			}
		})
	}
}

// volumeNames are the fake's volumes, by name.
func volumeNames(h *harness) []string {
	var out []string
	for _, v := range h.fake.Volumes() {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

// TestAKilledOrRemovedPartIsNoCrash: a part of a task that someone killed,
// stopped or removed (docker rm -f web-1.prober) kills its task, as a
// first container someone removed does, but it did not crash: no crash
// loop, no backoff. A part that exits on its own crashed.
func TestAKilledOrRemovedPartIsNoCrash(t *testing.T) {
	tmpl := &demospec.SidecarController("web", "demo-task:latest", 1, nil).DesiredState.TaskTemplate
	hash := api.TemplateHash(tmpl)
	first := api.Task{ID: "f", Name: "web-1", State: api.StateRunning, StartedAt: planNow.Add(-2 * time.Second),
		Labels: map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelTemplateHash: hash}}
	exited := func(killed bool) api.Task {
		return api.Task{ID: "p", Name: "web-1.prober", JoinedTo: "f", State: api.StateExited, ExitCode: 137, Killed: killed,
			StartedAt: planNow.Add(-time.Second), FinishedAt: planNow,
			Labels: map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelContainer: "prober"}}
	}
	for _, tt := range []struct {
		name    string
		tasks   []api.Task
		crashes int
	}{
		{"a part killed (docker kill, stop, rm -f before it is gone)", []api.Task{first, exited(true)}, 0},
		{"a part removed", []api.Task{first}, 0},
		{"a part that exited on its own", []api.Task{first, exited(false)}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := groupTasks(tt.tasks, map[string]*api.TaskTemplate{hash: tmpl}, planNow)
			if len(g.firsts) != 1 || g.firsts[0].Active() {
				t.Fatalf("tasks = %+v, want web-1 dead as a whole", g.firsts)
			}
			h, crashes := crashHistory{}.observe(g.firsts)
			if len(crashes) != tt.crashes {
				t.Errorf("crashes = %+v, want %d", crashes, tt.crashes)
			}
			if c := h.condition(planNow); (c != nil) != (tt.crashes > 0) {
				t.Errorf("CrashLoop condition %+v, want one: %v", c, tt.crashes > 0)
			}
		})
	}
}

func TestARemovedSidecarIsReplacedWithoutACrashLoop(t *testing.T) {
	h := newHarness(t, Options{})
	h.setSpec(demospec.SidecarController("web", "demo-task:latest", 1, nil))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	var side string
	for _, c := range h.fake.Tasks() {
		if c.Name == "web-1.prober" {
			side = c.ID
		}
	}
	if err := h.fake.DeleteTask(t.Context(), side); err != nil { // docker rm -f web-1.prober
		t.Fatal(err)
	}
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if st := h.status(t, "web"); st == nil || st.FindCondition(api.ConditionCrashLoop) != nil {
		t.Errorf("status %+v, want no CrashLoop: the sidecar was removed, it did not crash", st)
	}
	want := map[string]string{"web-1": "", "web-1.prober": "web-1"}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Errorf("containers = %v, want %v: the task replaced at once, with no backoff", got, want)
	}
}
