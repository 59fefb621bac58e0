package bench

// This file is the convergence of N replicas, 0→N and N→0, in rounds that
// alternate the systems, so that each goes first in turn and drift in the
// engine's speed hits all of them alike: the manager, given a new
// controller each round (managerSystem), against raw Docker, N tasks made
// at once by plain Docker calls (rawSystem). Four parts run these rounds,
// each with its own image and task: convergence (against Swarm too),
// tasks, health and pull (pull.go).

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/events"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
)

// healthCheck is the HEALTHCHECK of the health part's image, as
// build-image.sh takes it: the demo task's own check (a GET of its
// /healthz) every second, the timeout and retries of the script's default.
const healthCheck = `--interval=1s --timeout=3s --retries=3 CMD ["/task", "healthcheck"]`

// system is one way of running N replicas in a round.
type system struct {
	name string
	// labels find this system's containers.
	labels map[string]string
	// up asks for n replicas in round (counted from 0); down removes them.
	up   func(ctx context.Context, round, n int) error
	down func(ctx context.Context, round int) error
	// match returns what accepts the events of this system's containers
	// in round.
	match func(round int) func(dockerEvent) bool
	// before, when not nil, runs before the round's 0→N is timed; after
	// once its N→0 has settled.
	before, after func(ctx context.Context, round int) error
	// upTimes and downTimes receive one sample per round, curves the
	// times of the k-th start of each round's 0→N.
	upTimes, downTimes *Durations
	curves             *[]Durations
	// healthyTimes, when not nil, receives per round how long from the
	// same start until the last container's health_status: healthy event;
	// the round's N→0 waits for it.
	healthyTimes *Durations
}

// measureConvergence is the convergence part: manager, raw Docker (N
// parallel create+start) and, where it runs, Swarm (ServiceCreate).
func (e *dockerEnv) measureConvergence(ctx context.Context, cfg Config, res *DockerResults) error {
	systems := []*system{
		e.managerSystem("conv", e.image, demospec.Controller, &res.ManagerVersusRaw),
		e.rawSystem("conv", &res.ManagerVersusRaw, func(id string, slot int, labels map[string]string) rawTask {
			return plainTask(id, slot, e.image, labels, false)
		}),
	}
	if e.swarmUnavailable == "" {
		var serviceID string
		systems = append(systems, &system{
			name:   "swarm",
			labels: e.runLabels("swarm"),
			up: func(ctx context.Context, _, n int) (err error) {
				serviceID, err = createService(ctx, e.cli, "rmbench-"+e.runID+"-swarm", e.image, n, e.runLabels("swarm"))
				return err
			},
			down: func(ctx context.Context, _ int) error {
				if err := e.cli.ServiceRemove(ctx, serviceID); err != nil {
					return fmt.Errorf("service rm: %w", err)
				}
				return nil
			},
			match:   func(int) func(dockerEvent) bool { return labelled(systemLabel, "swarm") },
			upTimes: &res.SwarmUp, downTimes: &res.SwarmDown, curves: &res.SwarmCurves,
		})
	}
	return e.convergeRounds(ctx, systems, cfg.Rounds, cfg.Replicas, 1, &res.ManagerDockerCalls)
}

// measureTasks is the tasks part: tasks of the demo task and a prober
// sidecar in its network, both mounting an emptyDir volume, converged when
// every container has started.
func (e *dockerEnv) measureTasks(ctx context.Context, cfg Config, res *DockerResults) error {
	m := &taskController("shape", e.image, 1, nil).DesiredState.TaskTemplate.DesiredState.Manifest
	tr := &TaskConvergenceResult{Replicas: cfg.Replicas, Containers: len(m.Containers), Volumes: len(m.Volumes), Shape: taskShape}
	res.Tasks = tr
	systems := []*system{
		e.managerSystem("tasks", e.image, taskController, &tr.ManagerVersusRaw),
		e.rawSystem("tasks", &tr.ManagerVersusRaw, func(id string, slot int, labels map[string]string) rawTask {
			return newRawTask(id, slot, m, labels)
		}),
	}
	fmt.Fprintf(e.progress, "tasks: 0→%d of tasks of %d containers, manager and raw Docker, %d rounds\n", cfg.Replicas, tr.Containers, cfg.Rounds)
	return e.convergeRounds(ctx, systems, cfg.Rounds, cfg.Replicas, tr.Containers, &tr.ManagerDockerCalls)
}

// taskController is demospec.SidecarController without the prober's
// health check: neither side's containers then run a probe, as in the
// convergence part, and a container counts once it has started.
func taskController(id, image string, replicas int, extra map[string]string) *api.ReplicationController {
	rc := demospec.SidecarController(id, image, replicas, extra)
	for i := range rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers {
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[i].HealthCheck = nil
	}
	return rc
}

// measureHealth is the health part (issue 16): the demo task built with a
// HEALTHCHECK every second, timed until the N-th start event and, from the
// same start, until the N-th health_status: healthy event; the N→0 begins
// once every container is healthy.
func (e *dockerEnv) measureHealth(ctx context.Context, cfg Config, res *DockerResults) error {
	hr := &HealthConvergenceResult{Replicas: cfg.Replicas, HealthCheck: healthCheck}
	res.Health = hr
	img := e.image + "-health"
	e.extraImages = append(e.extraImages, img)
	if err := e.buildImage(ctx, img, healthCheck); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	manager := e.managerSystem("health", img, demospec.Controller, &hr.ManagerVersusRaw)
	raw := e.rawSystem("health", &hr.ManagerVersusRaw, func(id string, slot int, labels map[string]string) rawTask {
		return plainTask(id, slot, img, labels, false)
	})
	manager.healthyTimes, raw.healthyTimes = &hr.ManagerHealthy, &hr.RawHealthy
	fmt.Fprintf(e.progress, "health: 0→%d of a health-checked image, manager and raw Docker, %d rounds\n", cfg.Replicas, cfg.Rounds)
	return e.convergeRounds(ctx, []*system{manager, raw}, cfg.Rounds, cfg.Replicas, 1, &hr.ManagerDockerCalls)
}

// convergeRounds runs rounds rounds of systems, each round starting with
// the next system, so that each goes first in turn: a convergeRound of n
// replicas of containers containers each. It sets calls to the daemon's
// task-control calls per round.
func (e *dockerEnv) convergeRounds(ctx context.Context, systems []*system, rounds, n, containers int, calls *map[string]float64) error {
	before, err := e.daemon.calls(ctx)
	if err != nil {
		return err
	}
	for round := range rounds {
		for k := range systems {
			if err := e.convergeRound(ctx, systems[(round+k)%len(systems)], round, rounds, n, n*containers); err != nil {
				return err
			}
		}
	}
	after, err := e.daemon.calls(ctx)
	*calls = callsSince(before, after, rounds)
	return err
}

// convergeRound times one round of system s: after s.before, its 0→n until
// containers distinct containers have started, then its n→0 until as many
// are destroyed; then it waits for the system's containers to be gone and
// runs s.after.
func (e *dockerEnv) convergeRound(ctx context.Context, s *system, round, rounds, n, containers int) error {
	fail := func(what string, err error) error {
		return fmt.Errorf("convergence round %d: %s%s: %w", round+1, s.name, what, err)
	}
	if s.before != nil {
		if err := s.before(ctx, round); err != nil {
			return fail("", err)
		}
	}
	match := s.match(round)
	actions := []string{"start"}
	if s.healthyTimes != nil {
		actions = append(actions, string(events.ActionHealthStatusHealthy))
	}
	curves, _, err := e.timeCurves(ctx, func() error { return s.up(ctx, round, n) }, containers, match, actions...)
	if err != nil {
		return fail(fmt.Sprintf(" 0→%d", n), err)
	}
	up := curves[0][containers-1]
	*s.curves = append(*s.curves, curves[0])
	down, err := e.timeChange(ctx, func() error { return s.down(ctx, round) }, "destroy", containers, match)
	if err != nil {
		return fail(fmt.Sprintf(" %d→0", n), err)
	}
	*s.upTimes = append(*s.upTimes, up)
	*s.downTimes = append(*s.downTimes, down)
	healthy := ""
	if s.healthyTimes != nil {
		*s.healthyTimes = append(*s.healthyTimes, curves[1][containers-1])
		healthy = " (healthy " + fmtDuration(curves[1][containers-1]) + ")"
	}
	fmt.Fprintf(e.progress, "convergence round %d/%d: %-14s 0→%d %s%s, %d→0 %s\n", round+1, rounds, s.name, n, fmtDuration(up), healthy, n, fmtDuration(down))
	if err := e.settle(ctx, s.labels); err != nil {
		return err
	}
	if s.after != nil {
		if err := s.after(ctx, round); err != nil {
			return fail("", err)
		}
	}
	return nil
}

// managerSystem is the manager given a controller it has never seen each
// round, rmbench-<run>-<part>-<round> of image as controller makes it,
// with a template (and so a template hash) of its own: its 0→N is a first
// apply (Store.CreateController, as `rcctl apply` writes), the case where
// it knows nothing yet of the template or its image; its N→0 is the scale
// to 0; the controller is deleted once the node has removed its containers
// and volumes. Its samples go to r's manager side.
func (e *dockerEnv) managerSystem(part, image string, controller func(id, image string, replicas int, extra map[string]string) *api.ReplicationController, r *ManagerVersusRaw) *system {
	labels := e.runLabels(part + "-manager")
	id := func(round int) string { return fmt.Sprintf("rmbench-%s-%s-%d", e.runID, part, round+1) }
	// the template hashes applied so far: each round's must be new, or its
	// 0→N would not be a first apply
	hashes := make(map[string]bool)
	return &system{
		name:   part + "/manager",
		labels: labels,
		up: func(ctx context.Context, round, n int) error {
			rc := controller(id(round), image, n, labels)
			hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
			if hashes[hash] {
				return fmt.Errorf("controller %s: template %s was applied in an earlier round, so this would not be a first apply", rc.ID, hash)
			}
			hashes[hash] = true
			_, err := e.daemon.store.CreateController(ctx, rc)
			return err
		},
		down:  func(ctx context.Context, round int) error { return setReplicas(ctx, e.daemon.store, id(round), 0) },
		match: func(round int) func(dockerEvent) bool { return labelled(api.LabelController, id(round)) },
		after: func(ctx context.Context, round int) error {
			// the node removes a task's volumes after its containers
			if err := waitVolumesGone(ctx, e.cli, map[string]string{api.LabelController: id(round)}); err != nil {
				return err
			}
			if err := e.daemon.store.DeleteController(ctx, id(round)); err != nil {
				return fmt.Errorf("delete %s: %w", id(round), err)
			}
			return nil
		},
		upTimes: &r.ManagerUp, downTimes: &r.ManagerDown, curves: &r.ManagerCurves,
	}
}

// rawSystem is the engine driven directly: n tasks at once, the k-th
// task(rmbench-<run>-<part>-raw, k, labels) with its containers (and
// volumes) labelled <part>-raw, and for the N→0 each task's rm -f (and
// volume rm), n at once. Its samples go to r's raw side.
func (e *dockerEnv) rawSystem(part string, r *ManagerVersusRaw, task func(id string, slot int, labels map[string]string) rawTask) *system {
	labels := e.runLabels(part + "-raw")
	var tasks []rawTask
	var ids [][]string
	return &system{
		name:   part + "/raw",
		labels: labels,
		up: func(ctx context.Context, _, n int) error {
			tasks, ids = make([]rawTask, n), make([][]string, n)
			for k := range tasks {
				tasks[k] = task("rmbench-"+e.runID+"-"+part+"-raw", k+1, labels)
			}
			return inParallel(n, func(k int) (err error) {
				ids[k], err = tasks[k].run(ctx, e.cli)
				return err
			})
		},
		down: func(ctx context.Context, _ int) error {
			return inParallel(len(tasks), func(k int) error { return tasks[k].remove(ctx, e.cli, ids[k]) })
		},
		match:   func(int) func(dockerEvent) bool { return labelled(systemLabel, labels[systemLabel]) },
		after:   func(ctx context.Context, _ int) error { return waitVolumesGone(ctx, e.cli, labels) },
		upTimes: &r.RawUp, downTimes: &r.RawDown, curves: &r.RawCurves,
	}
}

// setReplicas is what `rcctl scale` does: read the spec, change the count,
// write it back if nobody changed it in between.
func setReplicas(ctx context.Context, store *registry.Store, id string, replicas int) error {
	spec, err := store.GetController(ctx, id)
	if err != nil {
		return err
	}
	if spec.Err != nil {
		return fmt.Errorf("controller %s: %w", id, spec.Err)
	}
	spec.Controller.DesiredState.Replicas = replicas
	_, err = store.UpdateController(ctx, spec.Controller, spec.ModRevision)
	return err
}

// callsSince is after-before by operation over rounds, the operations
// that did not move left out.
func callsSince(before, after map[string]float64, rounds int) map[string]float64 {
	out := make(map[string]float64)
	for op, v := range after {
		if d := (v - before[op]) / float64(rounds); d > 0 {
			out[op] = d
		}
	}
	return out
}
