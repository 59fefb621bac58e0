package bench

// This file is the rolling-update part: N running replicas switched to
// another image name, start-first (a surge of 1, none unavailable) and
// stop-first (one at a time: the manager's default), by the manager and by
// Swarm's service update with the same bounds. The two sets run side by
// side for the whole part, each switching between the bench image and its
// second name (docker tag of the same image, so that every update is a
// real change of image and template). Each round rolls every strategy
// once on each system, the next system first in each round, as the
// convergence alternates them. The manager's side is in
// rollout_manager.go, Swarm's in rollout_swarm.go.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/swarm"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
)

// rolloutSettle is the pause after each rolling update, so that the
// engine's clean-up of one does not slow the next.
const rolloutSettle = time.Second

// rolloutStrategy is one way of rolling, as each system spells it.
type rolloutStrategy struct {
	name string
	// manager is the controller's updateStrategy; nil is the default.
	manager *api.UpdateStrategy
	// swarmOrder is Swarm's --update-order; parallelism is 1.
	swarmOrder string
}

// rolloutStrategies are the strategies measured, in the order of
// DockerResults.Rollouts: a surge of 1 with none unavailable, against
// Swarm's start-first; and the manager's default bounds (maxUnavailable
// 1, maxSurge 0), against Swarm's stop-first. Both name monitorSeconds 0,
// as Swarm's side gets --update-monitor 0s: Swarm's monitor only watches
// for failures and never holds the next task, where the manager's default
// of 5 s holds each step that long after its new container runs ready
// (the mass rollout of the control-plane part measures the default).
func rolloutStrategies() []rolloutStrategy {
	surge, one, none := intstr.FromInt(1), intstr.FromInt(1), intstr.FromInt(0)
	noMonitor := 0
	return []rolloutStrategy{
		{name: "start-first", manager: &api.UpdateStrategy{Type: api.RollingUpdate, MaxSurge: &surge, MaxUnavailable: &none, MonitorSeconds: &noMonitor},
			swarmOrder: swarm.UpdateOrderStartFirst},
		{name: "stop-first", manager: &api.UpdateStrategy{Type: api.RollingUpdate, MaxSurge: &none, MaxUnavailable: &one, MonitorSeconds: &noMonitor},
			swarmOrder: swarm.UpdateOrderStopFirst},
	}
}

// rolloutSample is one timed rolling update.
type rolloutSample struct {
	// done is the system's end point; running the N-th new container's
	// start; status the manager's RolloutComplete status, or Swarm's
	// completed update state.
	done, running, status time.Duration
	// curve is when the k-th new container started.
	curve Durations
	// calls are the daemon's task-control calls, for the manager.
	calls map[string]float64
}

// rollingSystem is one system of the part.
type rollingSystem struct {
	name string
	// setup starts n replicas of the bench image; roll switches them to
	// img under s and times it; teardown removes them.
	setup    func(ctx context.Context) error
	roll     func(ctx context.Context, s rolloutStrategy, img string) (rolloutSample, error)
	teardown func(ctx context.Context) error
	// record appends a sample to the strategy's results.
	record func(r *RolloutResult, s rolloutSample)
}

// measureRollout tags the second image name, starts both sets and runs the
// rounds. Whatever it leaves on failure, teardown removes.
func (e *dockerEnv) measureRollout(ctx context.Context, cfg Config, res *DockerResults) (err error) {
	n := cfg.RolloutReplicas
	e.rolloutImage = e.image + "-b"
	if err := e.cli.ImageTag(ctx, e.image, e.rolloutImage); err != nil {
		return fmt.Errorf("rolling update: docker tag %s %s: %w", e.image, e.rolloutImage, err)
	}
	strategies := rolloutStrategies()
	res.RolloutReplicas = n
	res.Rollouts = make([]RolloutResult, len(strategies))
	for i, s := range strategies {
		res.Rollouts[i].Strategy = s.name
	}
	systems := []*rollingSystem{e.managerRolling(n)}
	if e.swarmUnavailable == "" {
		systems = append(systems, e.swarmRolling(n))
	}
	fmt.Fprintf(e.progress, "rolling updates: %d replicas, %d rounds of %d strategies × %d systems\n", n, cfg.RolloutRounds, len(strategies), len(systems))
	defer func() {
		for _, s := range systems {
			if tdErr := s.teardown(context.WithoutCancel(ctx)); tdErr != nil {
				err = errors.Join(err, fmt.Errorf("rolling update: %s: %w", s.name, tdErr))
			}
		}
	}()
	for _, s := range systems {
		if err := s.setup(ctx); err != nil {
			return fmt.Errorf("rolling update: %s: start %d replicas: %w", s.name, n, err)
		}
	}

	image := make(map[*rollingSystem]string, len(systems))
	calls := make([]map[string]float64, len(strategies))
	for round := range cfg.RolloutRounds {
		for i, st := range strategies {
			for k := range systems {
				sys := systems[(round+k)%len(systems)]
				img := e.rolloutImage
				if image[sys] == e.rolloutImage {
					img = e.image
				}
				sample, err := sys.roll(ctx, st, img)
				if err != nil {
					return fmt.Errorf("rolling update round %d: %s %s to %s: %w", round+1, sys.name, st.name, img, err)
				}
				image[sys] = img
				sys.record(&res.Rollouts[i], sample)
				calls[i] = addCalls(calls[i], sample.calls)
				fmt.Fprintf(e.progress, "rolling update round %d/%d: %-10s %-7s %s (new containers running %s, %s %s)\n",
					round+1, cfg.RolloutRounds, st.name, sys.name, fmtDuration(sample.done), fmtDuration(sample.running), statusWord(sys.name), fmtDuration(sample.status))
				if err := sleepCtx(ctx, rolloutSettle); err != nil {
					return err
				}
			}
		}
	}
	for i := range res.Rollouts {
		if calls[i] != nil {
			res.Rollouts[i].ManagerCalls = make(map[string]float64, len(calls[i]))
			for op, v := range calls[i] {
				res.Rollouts[i].ManagerCalls[op] = v / float64(cfg.RolloutRounds)
			}
		}
	}
	return nil
}

// statusWord names what a system's status time is.
func statusWord(system string) string {
	if system == "manager" {
		return "status RolloutComplete"
	}
	return "update state completed"
}

// addCalls adds b to a, allocating a when needed; a nil b leaves a as it
// is.
func addCalls(a, b map[string]float64) map[string]float64 {
	if b == nil {
		return a
	}
	if a == nil {
		a = make(map[string]float64, len(b))
	}
	for op, v := range b {
		a[op] += v
	}
	return a
}

// callsSince is the calls of after that were not in before, by operation.
func callsSince(before, after map[string]float64) map[string]float64 {
	out := make(map[string]float64)
	for op, v := range after {
		if d := v - before[op]; d > 0 {
			out[op] = d
		}
	}
	return out
}

// newContainers matches the events of a set's containers (match) that were
// not among old, the containers the set ran before the update.
func newContainers(match func(dockerEvent) bool, old map[string]bool) func(dockerEvent) bool {
	return func(ev dockerEvent) bool { return match(ev) && !old[ev.ID] }
}

// oldContainers is the complement of newContainers within the set.
func oldContainers(match func(dockerEvent) bool, old map[string]bool) func(dockerEvent) bool {
	return func(ev dockerEvent) bool { return match(ev) && old[ev.ID] }
}

// runningIDs returns the ids of the running containers with labels; it
// fails unless there are exactly n.
func (e *dockerEnv) runningIDs(ctx context.Context, labels map[string]string, n int) (map[string]bool, error) {
	list, err := listContainers(ctx, e.cli, labels)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool, n)
	for _, c := range list {
		if c.State == "running" {
			ids[c.ID] = true
		}
	}
	if len(ids) != n {
		return nil, fmt.Errorf("%d running containers with %v, want %d", len(ids), labels, n)
	}
	return ids, nil
}

// curveSince is when each event came, from start.
func curveSince(start time.Time, evs []dockerEvent) Durations {
	curve := make(Durations, len(evs))
	for i, ev := range evs {
		curve[i] = ev.At.Sub(start)
	}
	return curve
}
