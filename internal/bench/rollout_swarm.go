package bench

// This file is Swarm's side of the rolling updates: one service for the
// whole part, each update a ServiceUpdate of its image with the
// UpdateConfig that `docker service update --image <img>
// --update-parallelism 1 --update-order <order> --update-delay 0s
// --update-monitor 0s` sends (the failure action stays pause, the CLI's
// default). It is timed from the call until every task runs the new image
// and the old ones have stopped (the last new container's start event and
// the last old one's die event): what the manager's RolloutComplete says.
// The update state's "completed" is taken too, without a target: the
// engine turns a monitor of 0 into its default (5s) and waits that long
// after the last task before it says completed.

import (
	"context"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/swarm"
)

// swarmServiceLabel is on every container of a service: its id.
const swarmServiceLabel = "com.docker.swarm.service.id"

// swarmUpdatePoll is how often the update state is read once every task
// runs the new image.
const swarmUpdatePoll = 20 * time.Millisecond

// swarmRolling returns Swarm as a system of the part.
func (e *dockerEnv) swarmRolling(n int) *rollingSystem {
	name := "rmbench-" + e.runID + "-swarm-roll"
	var id string
	return &rollingSystem{
		name: "swarm",
		setup: func(ctx context.Context) error {
			_, err := e.timeChange(ctx, func() (err error) {
				id, err = createService(ctx, e.cli, name, e.image, n, e.runLabels("swarm-rollout"))
				return err
			}, "start", n, labelled(systemLabel, "swarm-rollout"))
			return err
		},
		roll: func(ctx context.Context, s rolloutStrategy, img string) (rolloutSample, error) {
			return e.rollSwarm(ctx, id, n, s, img)
		},
		teardown: func(ctx context.Context) error {
			if id == "" {
				return nil
			}
			if err := e.cli.ServiceRemove(ctx, id); err != nil && !cerrdefs.IsNotFound(err) {
				return fmt.Errorf("service rm %s: %w", name, err)
			}
			return e.settle(ctx, map[string]string{swarmServiceLabel: id})
		},
		record: func(r *RolloutResult, s rolloutSample) {
			r.Swarm = append(r.Swarm, s.done)
			r.SwarmRunning = append(r.SwarmRunning, s.running)
			r.SwarmCompleted = append(r.SwarmCompleted, s.status)
			r.SwarmCurves = append(r.SwarmCurves, s.curve)
		},
	}
}

// rollSwarm updates service id to img with the order of s and times the
// update of its n tasks.
func (e *dockerEnv) rollSwarm(ctx context.Context, id string, n int, s rolloutStrategy, img string) (rolloutSample, error) {
	svc, _, err := e.cli.ServiceInspectWithRaw(ctx, id, swarm.ServiceInspectOptions{})
	if err != nil {
		return rolloutSample{}, fmt.Errorf("service inspect: %w", err)
	}
	labels := map[string]string{swarmServiceLabel: id}
	old, err := e.runningIDs(ctx, labels, n)
	if err != nil {
		return rolloutSample{}, err
	}
	spec := svc.Spec
	spec.TaskTemplate.ContainerSpec.Image = img
	spec.UpdateConfig = &swarm.UpdateConfig{
		Parallelism:   1,
		Delay:         0,
		FailureAction: swarm.UpdateFailureActionPause,
		Monitor:       0,
		Order:         s.swarmOrder,
	}

	mark := e.rec.mark()
	start := time.Now()
	// QueryRegistry false is --no-resolve-image: there is no registry
	resp, err := e.cli.ServiceUpdate(ctx, id, svc.Version, spec, swarm.ServiceUpdateOptions{QueryRegistry: false})
	if err != nil {
		return rolloutSample{}, fmt.Errorf("service update: %w", err)
	}
	for _, w := range resp.Warnings {
		fmt.Fprintf(e.progress, "  swarm: service update: %s\n", w)
	}
	match := labelled(swarmServiceLabel, id)
	started, err := e.rec.waitEvents(ctx, mark, "start", n, changeTimeout, newContainers(match, old))
	if err != nil {
		return rolloutSample{}, fmt.Errorf("new tasks: %w", err)
	}
	stopped, err := e.rec.waitEvents(ctx, mark, "die", n, changeTimeout, oldContainers(match, old))
	if err != nil {
		return rolloutSample{}, fmt.Errorf("old tasks: %w", err)
	}
	var sample rolloutSample
	sample.curve = curveSince(start, started)
	sample.running = sample.curve[n-1]
	sample.done = max(sample.running, stopped[n-1].At.Sub(start))

	completed, err := e.waitSwarmUpdate(ctx, id)
	if err != nil {
		return rolloutSample{}, err
	}
	sample.status = completed.Sub(start)
	running, err := e.runningIDs(ctx, labels, n)
	if err != nil {
		return rolloutSample{}, fmt.Errorf("update completed, but %w", err)
	}
	for cid := range running {
		if old[cid] {
			return rolloutSample{}, fmt.Errorf("update completed, but the old container %.12s still runs", cid)
		}
	}
	return sample, nil
}

// waitSwarmUpdate waits until the service's update state is completed and
// returns when it was seen so; a paused or rolled back update is an
// error.
func (e *dockerEnv) waitSwarmUpdate(ctx context.Context, id string) (time.Time, error) {
	deadline := time.Now().Add(changeTimeout)
	for {
		svc, _, err := e.cli.ServiceInspectWithRaw(ctx, id, swarm.ServiceInspectOptions{})
		if err != nil {
			return time.Time{}, fmt.Errorf("service inspect: %w", err)
		}
		now := time.Now()
		if st := svc.UpdateStatus; st != nil {
			switch st.State {
			case swarm.UpdateStateCompleted:
				return now, nil
			case swarm.UpdateStateUpdating:
			default:
				return time.Time{}, fmt.Errorf("service update %s: %s", st.State, st.Message)
			}
		}
		if now.After(deadline) {
			return time.Time{}, fmt.Errorf("service update not completed within %s", changeTimeout)
		}
		if err := sleepCtx(ctx, swarmUpdatePoll); err != nil {
			return time.Time{}, err
		}
	}
}
