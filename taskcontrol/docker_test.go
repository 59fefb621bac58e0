package taskcontrol_test

// Integration tests of Docker against the engine that DOCKER_HOST (or the
// local socket) points at. They skip when none answers, unless
// REQUIRE_DOCKER=1. Every container they create carries the labels of
// dockertest.Labels and is removed when its test ends.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/go-connections/nat"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m)) }

const waitTimeout = 30 * time.Second

// newDocker returns a Docker task control on the test engine, or skips.
func newDocker(t *testing.T) *taskcontrol.Docker {
	t.Helper()
	dockertest.RequireDocker(t)
	d, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{StopTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("NewDocker: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	return d
}

// testSpec is a demo-task spec with the test's labels and a controller
// label unique to the test, so that selectors see only this test's
// containers.
func testSpec(t *testing.T, image string, slot int) api.TaskSpec {
	t.Helper()
	labels := dockertest.Labels(t)
	rc := "rc-" + labels[dockertest.TestLabel]
	labels[api.LabelController] = rc
	labels[api.LabelSlot] = strconv.Itoa(slot)
	labels["name"] = "web"
	return api.TaskSpec{
		Name:   fmt.Sprintf("%s-%d", rc, slot),
		Labels: labels,
		Container: api.Container{
			Image:   image,
			Command: api.Command{"/task", "--listen", ":8080"},
		},
	}
}

func selectorOf(spec api.TaskSpec) map[string]string {
	return map[string]string{api.LabelController: spec.Labels[api.LabelController]}
}

func createTask(t *testing.T, d *taskcontrol.Docker, spec api.TaskSpec) api.Task {
	t.Helper()
	task, err := d.CreateTask(t.Context(), spec)
	if err != nil {
		t.Fatalf("CreateTask(%s): %v", spec.Name, err)
	}
	return task
}

// freePort returns a TCP port that was free on the host a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitListed polls ListTasks until one task of the selector satisfies ok.
func waitListed(t *testing.T, d *taskcontrol.Docker, selector map[string]string, id string, ok func(api.Task) error) api.Task {
	t.Helper()
	var found api.Task
	testpoll.Eventually(t, waitTimeout, func() error {
		tasks, err := d.ListTasks(t.Context(), selector)
		if err != nil {
			return err
		}
		for _, task := range tasks {
			if task.ID == id {
				found = task
				return ok(task)
			}
		}
		return fmt.Errorf("%.12s not listed", id)
	})
	return found
}

func TestDockerCreateTaskAppliesTheSpec(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	image := dockertest.DemoImage(t)
	cli := dockertest.Client(t)

	spec := testSpec(t, image, 1)
	hostPort := freePort(t)
	spec.Container.Env = []api.EnvVar{{Name: "MODE", Value: "demo"}}
	spec.Container.Ports = []api.Port{
		{Name: "http", ContainerPort: 8080, Protocol: "TCP"},
		{Name: "published", ContainerPort: 9090, HostPort: hostPort, HostIP: "127.0.0.1"},
	}
	spec.Container.Memory = 64 << 20
	spec.Container.CPU = 512
	start := time.Now()
	task := createTask(t, d, spec)

	if task.Name != spec.Name || task.Image != image || task.State != api.StateRunning {
		t.Errorf("CreateTask: got name %q, image %q, state %q; want %q, %q, running", task.Name, task.Image, task.State, spec.Name, image)
	}
	for k, v := range spec.Labels {
		if task.Labels[k] != v {
			t.Errorf("label %s: got %q, want %q", k, task.Labels[k], v)
		}
	}

	asked := time.Now()
	got, err := d.InspectTask(t.Context(), task.ID)
	if err != nil {
		t.Fatalf("InspectTask: %v", err)
	}
	if got.StartedAt.Before(start.Add(-5*time.Second)) || !got.FinishedAt.IsZero() || got.Created.IsZero() {
		t.Errorf("InspectTask times: created %s, started %s, finished %s; want started after %s and no finish", got.Created, got.StartedAt, got.FinishedAt, start)
	}
	// the engine's word that it runs is as old as the question
	if got.CheckedAt.Before(asked) || got.CheckedAt.After(time.Now()) {
		t.Errorf("InspectTask checked at %s, want when it was asked, from %s", got.CheckedAt, asked)
	}
	// The image has a HEALTHCHECK: a new container is not ready yet.
	if got.Health != api.HealthStarting && got.Health != api.HealthHealthy {
		t.Errorf("health: got %q, want starting or healthy", got.Health)
	}

	raw, err := cli.ContainerInspect(t.Context(), task.ID)
	if err != nil {
		t.Fatalf("ContainerInspect: %v", err)
	}
	if !slices.Contains(raw.Config.Env, "MODE=demo") {
		t.Errorf("env: got %q, want MODE=demo in it", raw.Config.Env)
	}
	if got, want := []string(raw.Config.Cmd), []string{"/task", "--listen", ":8080"}; !slices.Equal(got, want) {
		t.Errorf("cmd: got %q, want %q", got, want)
	}
	if raw.HostConfig.Memory != 64<<20 || raw.HostConfig.CPUShares != 512 {
		t.Errorf("resources: got memory %d, cpu shares %d; want %d, 512", raw.HostConfig.Memory, raw.HostConfig.CPUShares, 64<<20)
	}
	for _, p := range []nat.Port{"8080/tcp", "9090/tcp"} {
		if _, ok := raw.Config.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, raw.Config.ExposedPorts)
		}
	}
	wantBinding := []nat.PortBinding{{HostIP: "127.0.0.1", HostPort: strconv.Itoa(hostPort)}}
	if got := raw.HostConfig.PortBindings; len(got) != 1 || !slices.Equal(got["9090/tcp"], wantBinding) {
		t.Errorf("port bindings: got %v, want only 9090/tcp -> %v", got, wantBinding)
	}

	// The list reads the health from the status text; the check runs every
	// 2s, so the container turns healthy soon.
	listed := waitListed(t, d, selectorOf(spec), task.ID, func(task api.Task) error {
		if !task.Ready() {
			return fmt.Errorf("listed as %s/%q, want running and healthy", task.State, task.Health)
		}
		return nil
	})
	if listed.Name != spec.Name || listed.Image != image || listed.Labels[api.LabelSlot] != "1" || listed.Created.IsZero() {
		t.Errorf("ListTasks: got %+v", listed)
	}
	// a list's Created is to the second: its word covers a second less
	if listed.CheckedAt.IsZero() || listed.CheckedAt.After(time.Now().Add(-time.Second)) {
		t.Errorf("ListTasks checked at %s, want a second before it was asked", listed.CheckedAt)
	}
}

func TestDockerTemplateHealthCheckGatesReadiness(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	cli := dockertest.Client(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	// The image's own check runs every 2s; the template's replaces it.
	spec.Container.HealthCheck = &api.HealthCheck{
		Test:     api.Command{"CMD", "/task", "healthcheck"},
		Interval: api.Duration(time.Second),
	}
	task := createTask(t, d, spec)

	// Docker runs the first probe one interval after the start: until then
	// the container is running but not ready.
	tasks, err := d.ListTasks(t.Context(), selectorOf(spec))
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if len(tasks) != 1 || tasks[0].Health != api.HealthStarting || tasks[0].Ready() {
		t.Fatalf("ListTasks right after the create: got %+v, want one task, health starting, not ready", tasks)
	}

	start := time.Now()
	waitListed(t, d, selectorOf(spec), task.ID, func(task api.Task) error {
		if task.Health != api.HealthHealthy || !task.Ready() {
			return fmt.Errorf("listed as %s/%q, want running and healthy", task.State, task.Health)
		}
		return nil
	})
	t.Logf("healthy %s after the first list", time.Since(start).Round(time.Millisecond))

	raw, err := cli.ContainerInspect(t.Context(), task.ID)
	if err != nil {
		t.Fatalf("ContainerInspect: %v", err)
	}
	hc := raw.Config.Healthcheck
	if hc == nil || !slices.Equal(hc.Test, []string{"CMD", "/task", "healthcheck"}) || hc.Interval != time.Second {
		t.Errorf("health check: got %+v, want the template's: /task healthcheck every 1s", hc)
	}
}

func TestDockerTemplateHealthCheckNoneDisablesTheImages(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	spec.Container.HealthCheck = &api.HealthCheck{Test: api.Command{"NONE"}}
	task := createTask(t, d, spec)

	if task.Health != api.HealthNone || !task.Ready() {
		t.Errorf("CreateTask: got %s/%q, want running without health (ready at once)", task.State, task.Health)
	}
	listed := waitListed(t, d, selectorOf(spec), task.ID, func(task api.Task) error { return nil })
	if listed.Health != api.HealthNone || !listed.Ready() {
		t.Errorf("ListTasks: got %s/%q, want running without health", listed.State, listed.Health)
	}
}

func TestDockerCreateTaskRefusesATakenName(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	first := createTask(t, d, spec)

	_, err := d.CreateTask(t.Context(), spec)
	if !errors.Is(err, api.ErrTaskNameConflict) {
		t.Fatalf("second create of %s: got %v, want ErrTaskNameConflict", spec.Name, err)
	}
	tasks, err := d.ListTasks(t.Context(), selectorOf(spec))
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if len(tasks) != 1 || tasks[0].ID != first.ID {
		t.Errorf("after the conflict: got %d tasks, want only %.12s", len(tasks), first.ID)
	}
}

func TestDockerCreateTaskNamesAMissingImage(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	image := "rmtest-missing-" + dockertest.RunID() + ":latest"
	spec := testSpec(t, image, 1)

	_, err := d.CreateTask(t.Context(), spec)
	if !errors.Is(err, taskcontrol.ErrImageNotFound) {
		t.Errorf("create with a missing image: got %v, want ErrImageNotFound", err)
	}
	if want := fmt.Sprintf("create %s: no such image: %s", spec.Name, image); fmt.Sprint(err) != want {
		t.Errorf("error text: got %q, want %q", err, want)
	}
	tasks, err := d.ListTasks(t.Context(), selectorOf(spec))
	if err != nil || len(tasks) != 0 {
		t.Errorf("after the failed create: got %d tasks (%v), want none", len(tasks), err)
	}
}

func TestDockerCreateTaskRemovesWhatDidNotStart(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	spec.Container.Command = api.Command{"/no-such-binary"}

	_, err := d.CreateTask(t.Context(), spec)
	t.Logf("start error: %v", err)
	if err == nil || !strings.HasPrefix(err.Error(), "start "+spec.Name+": ") {
		t.Fatalf("create with a missing binary: got %v, want a start error", err)
	}
	tasks, err := d.ListTasks(t.Context(), selectorOf(spec))
	if err != nil || len(tasks) != 0 {
		t.Errorf("after the failed start: got %d tasks (%v), want none", len(tasks), err)
	}
}

func TestDockerListTasksInEveryState(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)

	base := testSpec(t, image, 1)
	running := createTask(t, d, base)

	stoppedSpec := base
	stoppedSpec.Name = strings.TrimSuffix(base.Name, "-1") + "-2"
	stopped := createTask(t, d, stoppedSpec)
	zero := 0
	if err := cli.ContainerStop(t.Context(), stopped.ID, container.StopOptions{Timeout: &zero}); err != nil {
		t.Fatalf("stop: %v", err)
	}

	crashSpec := base
	crashSpec.Name = strings.TrimSuffix(base.Name, "-1") + "-3"
	crashSpec.Container.Command = api.Command{"/task", "--exit-after", "500ms"}
	crashed := createTask(t, d, crashSpec)

	// Created but never started, as after a failed start that could not
	// be cleaned up.
	created, err := cli.ContainerCreate(t.Context(), &container.Config{Image: image, Labels: base.Labels}, nil, nil, nil,
		strings.TrimSuffix(base.Name, "-1")+"-4")
	if err != nil {
		t.Fatalf("ContainerCreate: %v", err)
	}

	want := map[string]struct {
		state    string
		exitCode int
	}{
		running.ID: {api.StateRunning, 0},
		stopped.ID: {api.StateExited, 0},
		crashed.ID: {api.StateExited, 0}, // a list does not say; the inspect below does
		created.ID: {api.StateCreated, 0},
	}
	testpoll.Eventually(t, waitTimeout, func() error {
		tasks, err := d.ListTasks(t.Context(), selectorOf(base))
		if err != nil {
			return err
		}
		if len(tasks) != len(want) {
			return fmt.Errorf("listed %d tasks, want %d", len(tasks), len(want))
		}
		for _, task := range tasks {
			w, ok := want[task.ID]
			if !ok {
				return fmt.Errorf("unexpected task %s", task.Name)
			}
			if task.State != w.state || task.ExitCode != w.exitCode {
				return fmt.Errorf("%s: listed %s (%d), want %s (%d)", task.Name, task.State, task.ExitCode, w.state, w.exitCode)
			}
		}
		return nil
	})

	got, err := d.InspectTask(t.Context(), crashed.ID)
	if err != nil {
		t.Fatalf("InspectTask: %v", err)
	}
	if got.State != api.StateExited || got.ExitCode != 3 || got.FinishedAt.Before(got.StartedAt) || got.Active() {
		t.Errorf("crashed task: got %+v, want exited with code 3 after it started", got)
	}
	got, err = d.InspectTask(t.Context(), created.ID)
	if err != nil {
		t.Fatalf("InspectTask: %v", err)
	}
	if got.State != api.StateCreated || !got.StartedAt.IsZero() || !got.FinishedAt.IsZero() {
		t.Errorf("created task: got %+v, want created, never started", got)
	}

	// A selector pair narrows the list.
	one, err := d.ListTasks(t.Context(), map[string]string{
		api.LabelController: base.Labels[api.LabelController], dockertest.TestLabel: base.Labels[dockertest.TestLabel],
		"name": "nope",
	})
	if err != nil || len(one) != 0 {
		t.Errorf("list with a mismatching pair: got %d tasks (%v), want none", len(one), err)
	}
}

func TestDockerDeleteTask(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	task := createTask(t, d, spec)

	// How long the stop takes is not asserted: a SIGTERM that reaches the
	// task before its handler is installed is ignored (it runs as PID 1),
	// and Docker kills it after the stop timeout. Both paths must delete.
	if err := d.DeleteTask(t.Context(), task.ID); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	if err := d.DeleteTask(t.Context(), task.ID); err != nil {
		t.Errorf("second DeleteTask: got %v, want nil", err)
	}
	if _, err := d.InspectTask(t.Context(), task.ID); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("InspectTask after delete: got %v, want ErrTaskNotFound", err)
	}
	tasks, err := d.ListTasks(t.Context(), selectorOf(spec))
	if err != nil || len(tasks) != 0 {
		t.Errorf("after delete: got %d tasks (%v), want none", len(tasks), err)
	}
	// The slot's name is free again.
	createTask(t, d, spec)
}

func TestDockerRenameTask(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	image := dockertest.DemoImage(t)
	one := testSpec(t, image, 1)
	two := one
	two.Name = strings.TrimSuffix(one.Name, "-1") + "-2"
	first := createTask(t, d, one)
	createTask(t, d, two)

	if err := d.RenameTask(t.Context(), first.ID, two.Name); !errors.Is(err, api.ErrTaskNameConflict) {
		t.Errorf("rename onto a taken name: got %v, want ErrTaskNameConflict", err)
	}
	if err := d.RenameTask(t.Context(), "rmtest-no-such-container-"+dockertest.RunID(), "x"+dockertest.RunID()); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("rename of a missing container: got %v, want ErrTaskNotFound", err)
	}
	dead := one.Name + "-dead"
	if err := d.RenameTask(t.Context(), first.ID, dead); err != nil {
		t.Fatalf("RenameTask: %v", err)
	}
	got, err := d.InspectTask(t.Context(), first.ID)
	if err != nil || got.Name != dead {
		t.Errorf("after rename: got name %q (%v), want %q", got.Name, err, dead)
	}
	createTask(t, d, one) // the slot's name is free
}

func TestDockerEvents(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	// A label key of this test alone: the stream is filtered by key.
	key := "rmtest.events." + spec.Labels[dockertest.TestLabel]
	spec.Labels[key] = "1"

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, errs := d.Events(ctx, key)

	before := time.Now().Add(-time.Second) // the engine's clock is the host's
	task := createTask(t, d, spec)
	deadName := spec.Name + "-dead"
	if err := d.RenameTask(t.Context(), task.ID, deadName); err != nil {
		t.Fatalf("RenameTask: %v", err)
	}
	if err := d.DeleteTask(t.Context(), task.ID); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	after := time.Now().Add(time.Second)

	var actions []string
	name := spec.Name
	timeout := time.After(waitTimeout)
	for !slices.Contains(actions, "destroy") {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended after %q: %v", actions, <-errs)
			}
			if ev.ID != task.ID {
				t.Errorf("event for %.12s, want only %.12s", ev.ID, task.ID)
			}
			// what the attributes tell
			if ev.Action == "rename" {
				if ev.OldName != spec.Name {
					t.Errorf("rename event: old name %q, want %q", ev.OldName, spec.Name)
				}
				name = deadName
			}
			if ev.Name != name {
				t.Errorf("%s event: name %q, want %q", ev.Action, ev.Name, name)
			}
			if ev.Image != spec.Container.Image {
				t.Errorf("%s event: image %q, want %q", ev.Action, ev.Image, spec.Container.Image)
			}
			if ev.Time.Before(before) || ev.Time.After(after) {
				t.Errorf("%s event: time %s, want between %s and %s", ev.Action, ev.Time, before, after)
			}
			if ev.Labels[key] != "1" || ev.Labels[api.LabelController] != spec.Labels[api.LabelController] {
				t.Errorf("%s event labels: got %v, want the container's", ev.Action, ev.Labels)
			}
			for _, attr := range []string{"name", "image"} {
				if _, ok := ev.Labels[attr]; ok {
					t.Errorf("%s event labels hold the attribute %q", ev.Action, attr)
				}
			}
			actions = append(actions, ev.Action)
		case <-timeout:
			t.Fatalf("no destroy event within %s; got %q", waitTimeout, actions)
		}
	}
	t.Logf("events: %q", actions)
	for _, want := range []string{"create", "start", "rename", "die", "destroy"} {
		if !slices.Contains(actions, want) {
			t.Errorf("events: got %q, want %s among them", actions, want)
		}
	}

	cancel()
	for range events {
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("stream error after cancel: got %v, want context.Canceled", err)
	}
}

func TestNewDocker(t *testing.T) {
	if _, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{StopTimeout: -time.Second}); err == nil {
		t.Error("negative stop timeout: got nil error")
	}
	d, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{Host: "unix:///nonexistent/docker.sock"})
	if err != nil {
		t.Fatalf("NewDocker: %v", err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := d.Ping(ctx); err == nil || !strings.Contains(err.Error(), "/nonexistent/docker.sock") {
		t.Errorf("Ping of a missing socket: got %v, want an error naming it", err)
	}
}
