package bench

// This file is the convergence part: 0→N and N→0 by the manager, by the
// engine driven directly (N parallel create+start, N parallel rm -f), and
// by Swarm where it runs, alternated over rounds so that each system goes
// first in turn and drift in the engine's speed hits all of them alike.
// The manager's side of a round is in converge_manager.go. The rounds
// (convergeRounds, convergeRound) and raw Docker's side (rawSystem) serve
// the tasks and health parts too.

import (
	"context"
	"fmt"
	"sync"

	"github.com/docker/docker/api/types/events"
)

// system is one way of running N containers of the image.
type system struct {
	name string
	// up asks for n containers in round (counted from 0); down removes
	// them.
	up   func(ctx context.Context, round, n int) error
	down func(ctx context.Context, round int) error
	// match returns what accepts the events of this system's containers
	// in round.
	match func(round int) func(dockerEvent) bool
	// before, when not nil, runs before the round's 0→N is timed: the
	// removal of the image the pull part's systems must pull.
	before func(ctx context.Context, round int) error
	// after, when not nil, runs once the round's N→0 has settled: the
	// deletion of the manager's controller.
	after func(ctx context.Context, round, n int) error
	// labels find this system's containers.
	labels map[string]string
	// upTimes and downTimes receive one sample per round, curves the
	// times of the k-th start of each round's 0→N.
	upTimes, downTimes *Durations
	curves             *[]Durations
	// healthyTimes, when not nil, receives per round how long from the
	// same start until the last container's health_status: healthy event;
	// the round's N→0 waits for it.
	healthyTimes *Durations
}

// healthyAction is the event of a container whose health check passed.
const healthyAction = string(events.ActionHealthStatusHealthy)

// into sets where s's samples go and returns s.
func (s *system) into(upTimes, downTimes *Durations, curves *[]Durations) *system {
	s.upTimes, s.downTimes, s.curves = upTimes, downTimes, curves
	return s
}

// measureConvergence runs the rounds and fills in res.
func (e *dockerEnv) measureConvergence(ctx context.Context, cfg Config, res *DockerResults) error {
	manager := e.newControllerRounds("manager", "manager", "conv", e.image)
	systems := e.convergenceSystems(manager, res)
	calls, err := e.convergeRounds(ctx, systems, cfg.Rounds, cfg.Replicas, cfg.Replicas)
	res.ManagerDockerCalls = calls
	return err
}

// convergeRounds runs rounds rounds of systems, each round starting with
// the next system, so that each goes first in turn: a convergeRound of n
// replicas (of containers containers in all) each. It returns the
// daemon's task-control calls per round.
func (e *dockerEnv) convergeRounds(ctx context.Context, systems []*system, rounds, n, containers int) (map[string]float64, error) {
	before, err := e.dockerCalls(ctx)
	if err != nil {
		return nil, err
	}
	for round := range rounds {
		for k := range systems {
			if err := e.convergeRound(ctx, systems[(round+k)%len(systems)], round, rounds, n, containers); err != nil {
				return nil, err
			}
		}
	}
	after, err := e.dockerCalls(ctx)
	if err != nil {
		return nil, err
	}
	return callsPerRound(before, after, rounds), nil
}

// convergeRound times one round of system s: its 0→n until containers
// distinct containers have started (n, or more for tasks of several
// containers), after s.before, then its n→0 until as many are destroyed; then it waits for
// the system's containers to be gone and runs s.after.
func (e *dockerEnv) convergeRound(ctx context.Context, s *system, round, rounds, n, containers int) error {
	if s.before != nil {
		if err := s.before(ctx, round); err != nil {
			return fmt.Errorf("convergence round %d: %s: %w", round+1, s.name, err)
		}
	}
	match := s.match(round)
	actions := []string{"start"}
	if s.healthyTimes != nil {
		actions = append(actions, healthyAction)
	}
	curves, err := e.timeCurves(ctx, func() error { return s.up(ctx, round, n) }, containers, match, actions...)
	if err != nil {
		return fmt.Errorf("convergence round %d: %s 0→%d: %w", round+1, s.name, n, err)
	}
	up := curves[0][containers-1]
	*s.curves = append(*s.curves, curves[0])
	down, err := e.timeChange(ctx, func() error { return s.down(ctx, round) }, "destroy", containers, match)
	if err != nil {
		return fmt.Errorf("convergence round %d: %s %d→0: %w", round+1, s.name, n, err)
	}
	*s.upTimes = append(*s.upTimes, up)
	*s.downTimes = append(*s.downTimes, down)
	healthy := ""
	if s.healthyTimes != nil {
		*s.healthyTimes = append(*s.healthyTimes, curves[1][containers-1])
		healthy = " (healthy " + fmtDuration(curves[1][containers-1]) + ")"
	}
	fmt.Fprintf(e.progress, "convergence round %d/%d: %-7s 0→%d %s%s, %d→0 %s\n", round+1, rounds, s.name, n, fmtDuration(up), healthy, n, fmtDuration(down))
	if err := e.settle(ctx, s.labels); err != nil {
		return err
	}
	if s.after != nil {
		if err := s.after(ctx, round, n); err != nil {
			return fmt.Errorf("convergence round %d: %s: %w", round+1, s.name, err)
		}
	}
	return nil
}

// dockerCalls reads the daemon's Docker API calls so far, by operation.
func (e *dockerEnv) dockerCalls(ctx context.Context) (map[string]float64, error) {
	text, err := e.daemon.metrics(ctx)
	if err != nil {
		return nil, err
	}
	return metricByLabel(text, "replication_manager_docker_calls_total", "operation"), nil
}

// convergenceSystems returns the manager, raw Docker and, where it runs,
// Swarm.
func (e *dockerEnv) convergenceSystems(m *managerRounds, res *DockerResults) []*system {
	systems := []*system{
		m.system().into(&res.ManagerUp, &res.ManagerDown, &res.ManagerCurves),
		e.rawSystem("raw", "raw", e.image, runContainer).into(&res.RawUp, &res.RawDown, &res.RawCurves),
	}

	if e.swarmUnavailable == "" {
		var serviceID string
		systems = append(systems, &system{
			name: "swarm",
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
			match:     func(int) func(dockerEvent) bool { return labelled(systemLabel, "swarm") },
			labels:    e.runLabels("swarm"),
			upTimes:   &res.SwarmUp,
			downTimes: &res.SwarmDown,
			curves:    &res.SwarmCurves,
		})
	}
	return systems
}

// rawSystem is the engine driven directly: n parallel docker run -d of
// image (run: create+start, or runPulling; rmbench-<run>-<label>-<k>) with
// the system label label, and n parallel rm -f. Its samples go where into
// says.
func (e *dockerEnv) rawSystem(name, label, image string, run runFunc) *system {
	var ids []string
	return &system{
		name: name,
		up: func(ctx context.Context, _, n int) error {
			ids = make([]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					ids[i], errs[i] = run(ctx, e.cli, image, fmt.Sprintf("rmbench-%s-%s-%d", e.runID, label, i+1), e.runLabels(label))
				})
			}
			wg.Wait()
			return joinErrs(errs)
		},
		down:   func(ctx context.Context, _ int) error { return removeContainers(ctx, e.cli, ids) },
		match:  func(int) func(dockerEvent) bool { return labelled(systemLabel, label) },
		labels: e.runLabels(label),
	}
}
