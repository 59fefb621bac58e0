package bench

import (
	"maps"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"

	"github.com/replication-manager/replication-manager/api"
)

func TestTaskControllerIsTheSidecarTaskWithoutHealthChecks(t *testing.T) {
	rc := taskController("rmbench-x-task-1", "img", 30, map[string]string{runLabel: "x"})
	m := rc.DesiredState.TaskTemplate.DesiredState.Manifest
	if len(m.Containers) != 2 || len(m.Volumes) != 1 || rc.DesiredState.Replicas != 30 {
		t.Fatalf("want 2 containers, 1 volume, 30 replicas: %+v", rc.DesiredState)
	}
	for _, c := range m.Containers {
		if c.HealthCheck != nil {
			t.Errorf("container %s has a health check", c.Name)
		}
	}
	if err := api.Validate(rc, api.ValidateOptions{}); err != nil {
		t.Errorf("the part's controller is not valid: %v", err)
	}
}

func TestRawTaskIsWhatTheManagerCreates(t *testing.T) {
	labels := map[string]string{runLabel: "x", systemLabel: taskRawSystem}
	m := taskManifest("img")
	task := newRawTask("rmbench-x-rawtask", 3, m, labels)

	if len(task.volumes) != 1 || task.volumes[0].Name != "rmbench-x-rawtask-3.scratch" || !maps.Equal(task.volumes[0].Labels, labels) {
		t.Fatalf("volumes: %+v", task.volumes)
	}
	if len(task.containers) != 2 {
		t.Fatalf("containers: %+v", task.containers)
	}
	first, side := task.containers[0], task.containers[1]
	if first.name != "rmbench-x-rawtask-3" || side.name != "rmbench-x-rawtask-3.prober" {
		t.Errorf("names %q, %q", first.name, side.name)
	}
	if first.host.NetworkMode != "" || side.host.NetworkMode != "container:rmbench-x-rawtask-3" {
		t.Errorf("network modes %q, %q", first.host.NetworkMode, side.host.NetworkMode)
	}
	for i, c := range task.containers {
		if c.config.Image != "img" || c.config.Healthcheck != nil || c.config.Labels[runLabel] != "x" || c.config.Labels[systemLabel] != taskRawSystem {
			t.Errorf("container %d: %+v", i, c.config)
		}
		if got, want := strings.Join(c.config.Cmd, " "), strings.Join(m.Containers[i].Command, " "); got != want {
			t.Errorf("container %d runs %q, want %q", i, got, want)
		}
		if len(c.host.Mounts) != 1 {
			t.Fatalf("container %d mounts %+v", i, c.host.Mounts)
		}
		mt := c.host.Mounts[0]
		if mt.Type != mount.TypeVolume || mt.Source != "rmbench-x-rawtask-3.scratch" || mt.Target != "/scratch" || mt.ReadOnly != (i == 1) {
			t.Errorf("container %d mount %+v", i, mt)
		}
	}
	// the sidecar's labels are its own copy
	side.config.Labels["k"] = "v"
	if _, ok := first.config.Labels["k"]; ok {
		t.Error("the containers share one label map")
	}
}

func TestRunVolumeIsTheRunsOnly(t *testing.T) {
	tests := []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{runLabel: "abc", systemLabel: taskRawSystem}, true},
		{map[string]string{api.LabelController: "rmbench-abc-task-1", api.LabelSlot: "1"}, true},
		{map[string]string{runLabel: "abd"}, false},
		{map[string]string{api.LabelController: "rmbench-abcd-task-1"}, false},
		{map[string]string{api.LabelController: "web"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := runVolume(tt.labels, "abc"); got != tt.want {
			t.Errorf("runVolume(%v): %v, want %v", tt.labels, got, tt.want)
		}
	}
}

func TestCallsPerRound(t *testing.T) {
	got := callsPerRound(map[string]float64{"create": 10, "list": 3}, map[string]float64{"create": 130, "list": 3, "create_volume": 60}, 2)
	want := map[string]float64{"create": 60, "create_volume": 30}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func goodTasks() *TaskConvergenceResult {
	return &TaskConvergenceResult{Replicas: 30, Containers: 2, Volumes: 1, Shape: taskShape,
		ManagerVersusRaw: ManagerVersusRaw{ManagerUp: ms(2000, 2200, 2100), RawUp: ms(2000, 2000, 2000), ManagerDown: ms(900), RawDown: ms(1000)}}
}

func TestTaskConvergenceRowsJudgeTheRatio(t *testing.T) {
	const what = "0→30 tasks ratio manager (new controller)/raw"
	rows := taskConvergenceRows(goodTasks())
	if got := verdictOf(t, rows, what); got != Met {
		t.Errorf("1.05: verdict %v, want met", got)
	}
	if n := len(targeted(rows)); n != 1 {
		t.Errorf("%d rows with a target, want 1", n)
	}
	if !hasMeasure(rows, "60 docker run -d in all") || !hasMeasure(rows, "health check left out") {
		t.Errorf("the rows do not say what was run: %+v", rows)
	}

	bad := goodTasks()
	bad.ManagerUp = ms(2201)
	if got := verdictOf(t, taskConvergenceRows(bad), what); got != Missed {
		t.Errorf("1.10+: verdict %v, want MISSED", got)
	}
	none := goodTasks()
	none.ManagerUp = nil
	if got := verdictOf(t, taskConvergenceRows(none), what); got != NotAvailable {
		t.Errorf("no samples: verdict %v, want n/a", got)
	}
	if got := verdictOf(t, taskConvergenceRows(nil), "tasks"); got != NotAvailable {
		t.Errorf("not measured: verdict %v, want n/a", got)
	}
}

func TestBuildRowsHasTheTasksRowsWhenThePartRuns(t *testing.T) {
	r := goodResults()
	r.Docker.Tasks = goodTasks()
	if !hasMeasure(BuildRows(r), "0→30 tasks ratio") {
		t.Error("no tasks rows in a full run")
	}
	r.Config.Only = []string{PartConvergence}
	if hasMeasure(BuildRows(r), "0→30 tasks ratio") {
		t.Error("tasks rows in a run without the part")
	}
}
