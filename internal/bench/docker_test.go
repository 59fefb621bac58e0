package bench

import (
	"errors"
	"maps"
	"slices"
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
	labels := map[string]string{runLabel: "x", systemLabel: "tasks-raw"}
	m := &taskController("shape", "img", 1, nil).DesiredState.TaskTemplate.DesiredState.Manifest
	task := newRawTask("rmbench-x-rawtask", 3, m, labels)

	if len(task.volumes) != 1 || task.volumes[0].Name != "rmbench-x-rawtask-3.scratch" || !maps.Equal(task.volumes[0].Labels, labels) {
		t.Fatalf("volumes: %+v", task.volumes)
	}
	if len(task.containers) != 2 || task.pull {
		t.Fatalf("containers: %+v", task)
	}
	first, side := task.containers[0], task.containers[1]
	if first.name != "rmbench-x-rawtask-3" || side.name != "rmbench-x-rawtask-3.prober" {
		t.Errorf("names %q, %q", first.name, side.name)
	}
	if first.host.NetworkMode != "" || side.host.NetworkMode != "container:rmbench-x-rawtask-3" {
		t.Errorf("network modes %q, %q", first.host.NetworkMode, side.host.NetworkMode)
	}
	for i, c := range task.containers {
		if c.config.Image != "img" || c.config.Healthcheck != nil || c.config.Labels[runLabel] != "x" || c.config.Labels[systemLabel] != "tasks-raw" {
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

func TestAPlainTaskIsOneDockerRunOfTheDemoTask(t *testing.T) {
	task := plainTask("rmbench-x-conv-raw", 1, "img", map[string]string{runLabel: "x"}, true)
	if len(task.volumes) != 0 || len(task.containers) != 1 || !task.pull {
		t.Fatalf("%+v", task)
	}
	c := task.containers[0]
	if c.name != "rmbench-x-conv-raw-1" || c.config.Image != "img" || c.config.Labels[runLabel] != "x" || c.config.Healthcheck != nil ||
		strings.Join(c.config.Cmd, " ") != "/task --listen :8080" || c.host.NetworkMode != "" || len(c.host.Mounts) != 0 {
		t.Errorf("%s: %+v %+v", c.name, c.config, c.host)
	}
}

func TestInParallelReportsTheFirstErrorAndHowManyFailed(t *testing.T) {
	if err := inParallel(3, func(int) error { return nil }); err != nil {
		t.Errorf("no failure: %v", err)
	}
	err := inParallel(3, func(i int) error {
		if i == 0 {
			return nil
		}
		return errors.New("no such image")
	})
	if err == nil || err.Error() != "no such image (and 1 more failures)" {
		t.Errorf("two of three failed: %v", err)
	}
}

func TestRunVolumeIsTheRunsOnly(t *testing.T) {
	tests := []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{runLabel: "abc", systemLabel: "tasks-raw"}, true},
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

func TestOnlyTheHealthPartsImageHasAHealthCheck(t *testing.T) {
	if got, want := strings.Join(buildImageArgs("img:1", ""), " "), "--cmd demo-task --bin-name task --no-healthcheck img:1"; got != want {
		t.Errorf("the image of the other parts: %s, want %s", got, want)
	}
	if got, want := buildImageArgs("img:1-health", healthCheck), []string{"--cmd", "demo-task", "--bin-name", "task", "--healthcheck", healthCheck, "img:1-health"}; !slices.Equal(got, want) {
		t.Errorf("the health part's image: %q, want %q", got, want)
	}
	if !strings.Contains(healthCheck, "--interval=1s") || !strings.HasSuffix(healthCheck, `CMD ["/task", "healthcheck"]`) {
		t.Errorf("HEALTHCHECK %s: want one every second, of the demo task's own check", healthCheck)
	}
}

const sampleMetrics = `# HELP replication_manager_containers_total Container operations.
# TYPE replication_manager_containers_total counter
replication_manager_containers_total{operation="create",result="error"} 6
replication_manager_containers_total{operation="create",result="success"} 30
replication_manager_containers_total{operation="delete",result="success"} 30
# TYPE replication_manager_is_leader gauge
replication_manager_is_leader 1
`

func TestSumMetric(t *testing.T) {
	tests := []struct {
		name, metric, by string
		want             map[string]string
		sums             map[string]float64
	}{
		{"one series", "replication_manager_containers_total", "", map[string]string{"operation": "create", "result": "error"}, map[string]float64{"": 6}},
		{"summed over the labels not asked for", "replication_manager_containers_total", "", map[string]string{"operation": "create"}, map[string]float64{"": 36}},
		{"by a label", "replication_manager_containers_total", "operation", nil, map[string]float64{"create": 36, "delete": 30}},
		{"a gauge without labels", "replication_manager_is_leader", "", nil, map[string]float64{"": 1}},
		{"no such series", "replication_manager_containers_total", "", map[string]string{"operation": "rename"}, map[string]float64{}},
		{"a prefix of a name is not the name", "replication_manager_containers", "", nil, map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sumMetric(sampleMetrics, tt.metric, tt.by, tt.want)
			if err != nil || !maps.Equal(got, tt.sums) {
				t.Errorf("sumMetric = %v, %v; want %v", got, err, tt.sums)
			}
		})
	}
	if _, err := sumMetric("not { the format", "x", "", nil); err == nil {
		t.Error("text that does not parse: no error")
	}
}

func TestCallsSince(t *testing.T) {
	got := callsSince(map[string]float64{"create": 10, "list": 3}, map[string]float64{"create": 130, "list": 3, "create_volume": 60}, 2)
	if want := map[string]float64{"create": 60, "create_volume": 30}; !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
