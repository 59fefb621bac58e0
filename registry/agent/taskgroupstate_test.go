package agent

// The state of a task of several containers, and which of its parts' ends
// are crashes, as pure functions; taskgroup_test.go runs such tasks
// through a host.

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

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

// A task ran through its monitor window by its engine's word only when
// every one of its containers did: the task's start is its last part's,
// and the engine's word on it its oldest part's.
func TestATaskIsMonitoredOnlyAsFarAsEachOfItsContainers(t *testing.T) {
	tmpl := &demospec.SidecarController("web", "demo-task:latest", 1, nil).DesiredState.TaskTemplate
	hash := api.TemplateHash(tmpl)
	templates := map[string]*api.TaskTemplate{hash: tmpl}
	window := 5 * time.Second
	first := api.Task{ID: "f", Name: "web-1", State: api.StateRunning, StartedAt: planNow.Add(-10 * time.Second), CheckedAt: planNow,
		Labels: map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelTemplateHash: hash}}
	part := api.Task{ID: "p", Name: "web-1.prober", JoinedTo: "f", State: api.StateRunning, StartedAt: planNow.Add(-6 * time.Second),
		Labels: map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelContainer: "prober"}}

	part.CheckedAt = planNow.Add(-2 * time.Second) // 4 s after the part started: not yet through
	g := groupTasks([]api.Task{first, part}, templates, planNow)
	if len(g.firsts) != 1 || monitored(g.firsts[0], window) {
		t.Errorf("task %+v monitored, want not: its part's window is not covered", g.firsts)
	}
	part.CheckedAt = planNow
	g = groupTasks([]api.Task{first, part}, templates, planNow)
	if len(g.firsts) != 1 || !monitored(g.firsts[0], window) {
		t.Errorf("task %+v not monitored, want it: both containers ran through the window", g.firsts)
	}
}
