package bench

// This file is the rolling-update part: N running replicas switched to
// another image name, start-first (a surge of 1, none unavailable) and
// stop-first (one at a time: the manager's default), by the manager (one
// controller) and by Swarm's service update with the same bounds (one
// service), side by side for the whole part. Each update switches between
// the bench image and its second name (docker tag of the same image, so
// that every update is a real change of image and template). Each round
// rolls every strategy once on each system, the next system first in each
// round, as the convergence alternates them.

import (
	"context"
	"errors"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/swarm"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

const (
	// rolloutSettle is the pause after each rolling update, so that the
	// engine's clean-up of one does not slow the next.
	rolloutSettle = time.Second
	// swarmServiceLabel is on every container of a service: its id.
	swarmServiceLabel = "com.docker.swarm.service.id"
	// swarmUpdatePoll is how often the update state is read once every
	// task runs the new image.
	swarmUpdatePoll = 20 * time.Millisecond
)

// rolloutStrategy is one way of rolling, as each system spells it.
type rolloutStrategy struct {
	name string
	// desc describes it in the table.
	desc string
	// manager is the controller's updateStrategy.
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
	one, none, noMonitor := intstr.FromInt(1), intstr.FromInt(0), 0
	return []rolloutStrategy{
		{name: "start-first", desc: "start-first (manager maxSurge 1, maxUnavailable 0, monitorSeconds 0; Swarm --update-order start-first)",
			manager:    &api.UpdateStrategy{Type: api.RollingUpdate, MaxSurge: &one, MaxUnavailable: &none, MonitorSeconds: &noMonitor},
			swarmOrder: swarm.UpdateOrderStartFirst},
		{name: "stop-first", desc: "stop-first (manager maxUnavailable 1, maxSurge 0, monitorSeconds 0; Swarm --update-order stop-first)",
			manager:    &api.UpdateStrategy{Type: api.RollingUpdate, MaxSurge: &none, MaxUnavailable: &one, MonitorSeconds: &noMonitor},
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

// measureRollout tags the second image name, starts the manager's
// controller and Swarm's service of n replicas each, and runs the rounds.
// Whatever it leaves on failure, teardown removes.
func (e *dockerEnv) measureRollout(ctx context.Context, cfg Config, res *DockerResults) (err error) {
	n, second := cfg.RolloutReplicas, e.image+"-b"
	e.extraImages = append(e.extraImages, second)
	if err := e.cli.ImageTag(ctx, e.image, second); err != nil {
		return fmt.Errorf("rolling update: docker tag %s %s: %w", e.image, second, err)
	}
	strategies := rolloutStrategies()
	res.RolloutReplicas = n
	res.Rollouts = make([]RolloutResult, len(strategies))
	for i, s := range strategies {
		res.Rollouts[i].Strategy = s.name
	}
	id, service, serviceID := "rmbench-"+e.runID+"-roll", "rmbench-"+e.runID+"-swarm-roll", ""
	defer func() {
		ctx := context.WithoutCancel(ctx)
		if tdErr := e.daemon.store.DeleteController(ctx, id); tdErr != nil {
			err = errors.Join(err, fmt.Errorf("rolling update: delete %s: %w", id, tdErr))
		} else {
			err = errors.Join(err, e.settle(ctx, map[string]string{api.LabelController: id}))
		}
		if serviceID == "" {
			return
		}
		if tdErr := e.cli.ServiceRemove(ctx, serviceID); tdErr != nil && !cerrdefs.IsNotFound(tdErr) {
			err = errors.Join(err, fmt.Errorf("rolling update: service rm %s: %w", service, tdErr))
		} else {
			err = errors.Join(err, e.settle(ctx, map[string]string{swarmServiceLabel: serviceID}))
		}
	}()
	rolls := map[string]func(context.Context, rolloutStrategy, string) (rolloutSample, error){
		"manager": func(ctx context.Context, s rolloutStrategy, img string) (rolloutSample, error) {
			return e.rollManager(ctx, id, n, s, img)
		},
		"swarm": func(ctx context.Context, s rolloutStrategy, img string) (rolloutSample, error) {
			return e.rollSwarm(ctx, serviceID, n, s, img)
		},
	}
	systems := []string{"manager"}
	_, err = e.timeChange(ctx, func() error {
		_, err := e.daemon.store.CreateController(ctx, demospec.Controller(id, e.image, n, e.runLabels("rollout")))
		return err
	}, "start", n, labelled(api.LabelController, id))
	if err == nil && e.swarmUnavailable == "" {
		systems = append(systems, "swarm")
		_, err = e.timeChange(ctx, func() (err error) {
			serviceID, err = createService(ctx, e.cli, service, e.image, n, e.runLabels("swarm-rollout"))
			return err
		}, "start", n, labelled(systemLabel, "swarm-rollout"))
	}
	if err != nil {
		return fmt.Errorf("rolling update: start %d replicas: %w", n, err)
	}
	fmt.Fprintf(e.progress, "rolling updates: %d replicas, %d rounds of %d strategies × %d systems\n", n, cfg.RolloutRounds, len(strategies), len(systems))

	image := make(map[string]string, len(systems)) // what each system runs
	for round := range cfg.RolloutRounds {
		for i, st := range strategies {
			for k := range systems {
				sys := systems[(round+k)%len(systems)]
				img := second
				if image[sys] == second {
					img = e.image
				}
				sample, err := rolls[sys](ctx, st, img)
				if err != nil {
					return fmt.Errorf("rolling update round %d: %s %s to %s: %w", round+1, sys, st.name, img, err)
				}
				image[sys] = img
				res.Rollouts[i].add(sys, sample, cfg.RolloutRounds)
				status := "status RolloutComplete"
				if sys == "swarm" {
					status = "update state completed"
				}
				fmt.Fprintf(e.progress, "rolling update round %d/%d: %-10s %-7s %s (new containers running %s, %s %s)\n",
					round+1, cfg.RolloutRounds, st.name, sys, fmtDuration(sample.done), fmtDuration(sample.running), status, fmtDuration(sample.status))
				if err := sleepCtx(ctx, rolloutSettle); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// add records a sample of system, the manager's calls as a mean over
// rounds.
func (r *RolloutResult) add(system string, s rolloutSample, rounds int) {
	if system == "swarm" {
		r.Swarm, r.SwarmRunning, r.SwarmCompleted = append(r.Swarm, s.done), append(r.SwarmRunning, s.running), append(r.SwarmCompleted, s.status)
		r.SwarmCurves = append(r.SwarmCurves, s.curve)
		return
	}
	r.Manager, r.ManagerRunning, r.ManagerStatus = append(r.Manager, s.done), append(r.ManagerRunning, s.running), append(r.ManagerStatus, s.status)
	r.ManagerCurves = append(r.ManagerCurves, s.curve)
	if r.ManagerCalls == nil {
		r.ManagerCalls = make(map[string]float64)
	}
	for op, v := range s.calls {
		r.ManagerCalls[op] += v / float64(rounds)
	}
}

// ids are the ids of list.
func ids(list []container.Summary) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, c := range list {
		out[c.ID] = true
	}
	return out
}

// rollManager rewrites controller id's spec with img and strategy s, as
// `rcctl apply` of a changed spec does (Store.UpdateController with the
// ModRevision compare), and times the rollout of its n replicas: until the
// last new container's start event and a status in etcd, watched, that
// says Progressing/RolloutComplete with updatedReplicas n (written once the
// last old container is removed).
func (e *dockerEnv) rollManager(ctx context.Context, id string, n int, s rolloutStrategy, img string) (rolloutSample, error) {
	store := e.daemon.store
	labels := map[string]string{api.LabelController: id}
	spec, err := store.GetController(ctx, id)
	if err == nil && spec.Err != nil {
		err = fmt.Errorf("controller %s: %w", id, spec.Err)
	}
	if err != nil {
		return rolloutSample{}, err
	}
	running, err := waitRunning(ctx, e.cli, labels, n, false)
	if err != nil {
		return rolloutSample{}, err
	}
	old := ids(running)
	rc := spec.Controller
	rc.DesiredState.UpdateStrategy = s.manager
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = img
	callsBefore, err := e.daemon.calls(ctx)
	if err != nil {
		return rolloutSample{}, err
	}

	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	complete, err := e.watchStatus(watchCtx, id, fmt.Sprintf("Progressing/%s and updatedReplicas %d", api.ReasonRolloutComplete, n), func(st *api.ReplicationControllerStatus) (bool, error) {
		if st.ObservedRevision <= spec.ModRevision {
			return false, nil // a status of the spec before this update
		}
		return rolloutOutcome(st, n)
	})
	if err != nil {
		return rolloutSample{}, err
	}
	curves, start, err := e.timeCurves(ctx, func() error {
		_, err := store.UpdateController(ctx, rc, spec.ModRevision)
		return err
	}, n, func(ev dockerEvent) bool { return ev.Labels[api.LabelController] == id && !old[ev.ID] }, "start")
	if err != nil {
		return rolloutSample{}, fmt.Errorf("new containers: %w", err)
	}
	at, err := complete()
	if err != nil {
		return rolloutSample{}, err
	}
	sample := rolloutSample{curve: curves[0], running: curves[0][n-1], status: at.Sub(start)}
	sample.done = max(sample.running, sample.status)

	// the status said complete: exactly n containers are left, all new
	if running, err = waitRunning(ctx, e.cli, labels, n, false); err != nil {
		return rolloutSample{}, err
	}
	for _, c := range running {
		if old[c.ID] || c.Image != img {
			return rolloutSample{}, fmt.Errorf("rollout complete, but %s (%.12s) runs %s, an old container or image", c.Names, c.ID, c.Image)
		}
	}
	callsAfter, err := e.daemon.calls(ctx)
	sample.calls = callsSince(callsBefore, callsAfter, 1)
	return sample, err
}

// rolloutOutcome reports whether st ends the wait for a rollout of n
// replicas: complete (no error), or never to complete (an error: the spec
// refused, the progress deadline exceeded).
func rolloutOutcome(st *api.ReplicationControllerStatus, n int) (bool, error) {
	if c := st.FindCondition(api.ConditionInvalidSpec); c != nil {
		return true, fmt.Errorf("spec refused: %s", c.Message)
	}
	c := st.FindCondition(api.ConditionProgressing)
	switch {
	case c == nil:
		return false, nil
	case c.Status == "False":
		return true, fmt.Errorf("rollout failed: %s: %s", c.Reason, c.Message)
	}
	return c.Reason == api.ReasonRolloutComplete && st.UpdatedReplicas == n && st.Replicas == n, nil
}

// rollSwarm updates service id to img with the UpdateConfig that `docker
// service update --image <img> --update-parallelism 1 --update-order
// <order> --update-delay 0s --update-monitor 0s` sends (the failure action
// stays pause, the CLI's default), and times the update of its n tasks:
// until every task runs the new image and the old ones have stopped (the
// last new container's start event and the last old one's die event), what
// the manager's RolloutComplete says. The update state's "completed" is
// taken too, without a target: the engine turns a monitor of 0 into its
// default (5s) and waits that long after the last task before it says so.
func (e *dockerEnv) rollSwarm(ctx context.Context, id string, n int, s rolloutStrategy, img string) (rolloutSample, error) {
	svc, _, err := e.cli.ServiceInspectWithRaw(ctx, id, swarm.ServiceInspectOptions{})
	if err != nil {
		return rolloutSample{}, fmt.Errorf("service inspect: %w", err)
	}
	labels := map[string]string{swarmServiceLabel: id}
	running, err := waitRunning(ctx, e.cli, labels, n, true)
	if err != nil {
		return rolloutSample{}, err
	}
	old := ids(running)
	spec := svc.Spec
	spec.TaskTemplate.ContainerSpec.Image = img
	spec.UpdateConfig = &swarm.UpdateConfig{Parallelism: 1, Delay: 0, FailureAction: swarm.UpdateFailureActionPause, Monitor: 0, Order: s.swarmOrder}

	// the start of a new container, the die of an old one
	match := func(ev dockerEvent) bool {
		return ev.Labels[swarmServiceLabel] == id && old[ev.ID] == (ev.Action == "die")
	}
	curves, start, err := e.timeCurves(ctx, func() error {
		// QueryRegistry false is --no-resolve-image: there is no registry
		resp, err := e.cli.ServiceUpdate(ctx, id, svc.Version, spec, swarm.ServiceUpdateOptions{QueryRegistry: false})
		if err != nil {
			return fmt.Errorf("service update: %w", err)
		}
		for _, w := range resp.Warnings {
			fmt.Fprintf(e.progress, "  swarm: service update: %s\n", w)
		}
		return nil
	}, n, match, "start", "die")
	if err != nil {
		return rolloutSample{}, fmt.Errorf("new and old tasks: %w", err)
	}
	sample := rolloutSample{curve: curves[0], running: curves[0][n-1]}
	sample.done = max(sample.running, curves[1][n-1])

	deadline := time.Now().Add(changeTimeout)
	for {
		svc, _, err := e.cli.ServiceInspectWithRaw(ctx, id, swarm.ServiceInspectOptions{})
		if err != nil {
			return rolloutSample{}, fmt.Errorf("service inspect: %w", err)
		}
		now := time.Now()
		if st := svc.UpdateStatus; st != nil && st.State == swarm.UpdateStateCompleted {
			sample.status = now.Sub(start)
			break
		} else if st != nil && st.State != swarm.UpdateStateUpdating {
			return rolloutSample{}, fmt.Errorf("service update %s: %s", st.State, st.Message)
		}
		if now.After(deadline) {
			return rolloutSample{}, fmt.Errorf("service update not completed within %s", changeTimeout)
		}
		if err := sleepCtx(ctx, swarmUpdatePoll); err != nil {
			return rolloutSample{}, err
		}
	}
	if running, err = waitRunning(ctx, e.cli, labels, n, true); err != nil {
		return rolloutSample{}, fmt.Errorf("update completed, but %w", err)
	}
	for _, c := range running {
		if old[c.ID] {
			return rolloutSample{}, fmt.Errorf("update completed, but the old container %.12s still runs", c.ID)
		}
	}
	return sample, nil
}
