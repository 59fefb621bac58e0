package bench

// This file is the convergence of tasks of several containers (part
// "tasks"): 0→N and N→0 of tasks of the demo task with a prober sidecar
// and an emptyDir volume (demospec.SidecarController without the prober's
// health check), by the manager and by the engine driven directly (per
// task: volume create, docker run -d of the first, docker run -d
// --network container:<first> of the sidecar; N such tasks at once),
// alternated over rounds as the convergence part is. A task is converged
// when every one of its containers has started.

import (
	"context"
	"fmt"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// The system labels of the tasks part's containers (and of the raw side's
// volumes; the manager's volumes carry its controller's labels).
const (
	taskManagerSystem = "task-manager"
	taskRawSystem     = "task-raw"
)

// TaskConvergenceResult is the tasks part: one sample per round and system.
type TaskConvergenceResult struct {
	// Replicas is N, in tasks; Containers the containers of a task, so
	// that 0→N waits for Replicas×Containers start events.
	Replicas   int `json:"replicas"`
	Containers int `json:"containers"`
	// Volumes are the emptyDir volumes of a task.
	Volumes int `json:"volumes"`
	// Shape says what a task is, for the table.
	Shape string `json:"shape"`
	// HealthCheck is whether the prober had its health check (false: left
	// out on both sides, as the image's is).
	HealthCheck bool `json:"healthCheck"`

	// The curves have Replicas×Containers points.
	ManagerVersusRaw
}

// taskShape describes the tasks of the part.
const taskShape = "the demo task + a prober sidecar in its network (container:<first>), both mounting an emptyDir (demospec.SidecarController); the prober's health check left out, as the image's is"

// taskController is demospec.SidecarController without the prober's
// health check: neither side's containers then run a probe, as in the
// convergence part, and a container counts once it has started.
func taskController(id, image string, replicas int, extra map[string]string) *api.ReplicationController {
	rc := demospec.SidecarController(id, image, replicas, extra)
	m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
	for i := range m.Containers {
		m.Containers[i].HealthCheck = nil
	}
	return rc
}

// taskManifest is the manifest of the part's tasks.
func taskManifest(image string) *api.ContainerManifest {
	return &taskController("shape", image, 1, nil).DesiredState.TaskTemplate.DesiredState.Manifest
}

// measureTaskConvergence runs the rounds of the tasks part and sets
// res.Tasks.
func (e *dockerEnv) measureTaskConvergence(ctx context.Context, cfg Config, res *DockerResults) error {
	n := cfg.Replicas
	m := taskManifest(e.image)
	tr := &TaskConvergenceResult{Replicas: n, Containers: len(m.Containers), Volumes: len(m.Volumes), Shape: taskShape}
	res.Tasks = tr
	manager, raw := e.taskManagerSystem(tr), e.taskRawSystem(tr, m)
	systems := []*system{manager, raw}
	fmt.Fprintf(e.progress, "tasks: 0→%d of tasks of %d containers, manager and raw Docker, %d rounds\n", n, tr.Containers, cfg.Rounds)
	calls, err := e.convergeRounds(ctx, systems, cfg.Rounds, n, n*tr.Containers)
	if err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	tr.ManagerDockerCalls = calls
	return nil
}

// callsPerRound is after-before by operation over rounds, the operations
// that did not move left out.
func callsPerRound(before, after map[string]float64, rounds int) map[string]float64 {
	out := make(map[string]float64)
	for op, v := range after {
		if d := (v - before[op]) / float64(rounds); d > 0 {
			out[op] = d
		}
	}
	return out
}

// taskControllerID is the manager's controller of a round.
func (e *dockerEnv) taskControllerID(round int) string {
	return fmt.Sprintf("rmbench-%s-task-%d", e.runID, round+1)
}

// taskManagerSystem is the manager: a new controller of tasks each round
// (a first apply), scaled to 0, then deleted once its volumes are gone.
func (e *dockerEnv) taskManagerSystem(tr *TaskConvergenceResult) *system {
	labels := e.runLabels(taskManagerSystem)
	return &system{
		name: "tasks/manager",
		up: func(ctx context.Context, round, n int) error {
			_, err := e.daemon.store.CreateController(ctx, taskController(e.taskControllerID(round), e.image, n, labels))
			return err
		},
		down: func(ctx context.Context, round int) error {
			return setReplicas(ctx, e.daemon.store, e.taskControllerID(round), 0)
		},
		match: func(round int) func(dockerEvent) bool {
			return labelled(api.LabelController, e.taskControllerID(round))
		},
		after: func(ctx context.Context, round, _ int) error {
			id := e.taskControllerID(round)
			// the node removes a task's volumes after its containers
			if err := waitVolumesGone(ctx, e.cli, map[string]string{api.LabelController: id}); err != nil {
				return err
			}
			if err := e.daemon.store.DeleteController(ctx, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			return nil
		},
		labels:    labels,
		upTimes:   &tr.ManagerUp,
		downTimes: &tr.ManagerDown,
		curves:    &tr.ManagerCurves,
	}
}

// taskRawSystem is the engine driven directly: N tasks at once, each
// its volume create and its docker run -d's in turn; the N→0 is each
// task's rm -f's and volume rm, N at once.
func (e *dockerEnv) taskRawSystem(tr *TaskConvergenceResult, m *api.ContainerManifest) *system {
	labels := e.runLabels(taskRawSystem)
	var tasks []rawTask
	var ids [][]string
	return &system{
		name: "tasks/raw",
		up: func(ctx context.Context, _, n int) error {
			tasks = make([]rawTask, n)
			for i := range tasks {
				tasks[i] = newRawTask("rmbench-"+e.runID+"-rawtask", i+1, m, labels)
			}
			var err error
			ids, err = runRawTasks(ctx, e.cli, tasks)
			return err
		},
		down:  func(ctx context.Context, _ int) error { return removeRawTasks(ctx, e.cli, tasks, ids) },
		match: func(int) func(dockerEvent) bool { return labelled(systemLabel, taskRawSystem) },
		after: func(ctx context.Context, _, _ int) error {
			return waitVolumesGone(ctx, e.cli, labels)
		},
		labels:    labels,
		upTimes:   &tr.RawUp,
		downTimes: &tr.RawDown,
		curves:    &tr.RawCurves,
	}
}
