package bench

// This file is the manager's side of the rolling updates: one controller
// for the whole part, whose spec each update rewrites with the other image
// name and the strategy, as `rcctl apply` of a changed spec does
// (Store.UpdateController with the ModRevision compare). An update is
// timed from that write until the last new container's start event and a
// status in etcd, watched, that says Progressing/RolloutComplete with
// updatedReplicas N: the status is written once the last old container is
// removed.

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// managerRolling returns the manager as a system of the part.
func (e *dockerEnv) managerRolling(n int) *rollingSystem {
	id := "rmbench-" + e.runID + "-roll"
	match := labelled(api.LabelController, id)
	return &rollingSystem{
		name: "manager",
		setup: func(ctx context.Context) error {
			_, err := e.timeChange(ctx, func() error {
				_, err := e.daemon.store.CreateController(ctx, newController(id, e.image, n, e.runLabels("rollout")))
				return err
			}, "start", n, match)
			if err != nil {
				return err
			}
			_, err = e.waitRunning(ctx, id, n)
			return err
		},
		roll: func(ctx context.Context, s rolloutStrategy, img string) (rolloutSample, error) {
			return e.rollManager(ctx, id, n, s, img)
		},
		teardown: func(ctx context.Context) error {
			if err := e.daemon.store.DeleteController(ctx, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			return e.settle(ctx, map[string]string{api.LabelController: id})
		},
		record: func(r *RolloutResult, s rolloutSample) {
			r.Manager = append(r.Manager, s.done)
			r.ManagerRunning = append(r.ManagerRunning, s.running)
			r.ManagerStatus = append(r.ManagerStatus, s.status)
			r.ManagerCurves = append(r.ManagerCurves, s.curve)
		},
	}
}

// rollManager writes controller id's spec with img and strategy s and
// times the rollout of its n replicas.
func (e *dockerEnv) rollManager(ctx context.Context, id string, n int, s rolloutStrategy, img string) (rolloutSample, error) {
	store := e.daemon.store
	spec, err := store.GetController(ctx, id)
	if err != nil {
		return rolloutSample{}, err
	}
	if spec.Err != nil {
		return rolloutSample{}, fmt.Errorf("controller %s: %w", id, spec.Err)
	}
	old, err := e.runningIDs(ctx, map[string]string{api.LabelController: id}, n)
	if err != nil {
		return rolloutSample{}, err
	}
	rc := spec.Controller
	rc.DesiredState.UpdateStrategy = s.manager
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = img
	callsBefore, err := e.dockerCalls(ctx)
	if err != nil {
		return rolloutSample{}, err
	}

	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	complete, err := e.watchRolloutComplete(watchCtx, id, n, spec.ModRevision)
	if err != nil {
		return rolloutSample{}, err
	}
	mark := e.rec.mark()
	start := time.Now()
	if _, err := store.UpdateController(ctx, rc, spec.ModRevision); err != nil {
		return rolloutSample{}, err
	}
	match := labelled(api.LabelController, id)
	evs, err := e.rec.waitEvents(ctx, mark, "start", n, changeTimeout, newContainers(match, old))
	if err != nil {
		return rolloutSample{}, fmt.Errorf("new containers: %w", err)
	}
	var sample rolloutSample
	sample.curve = curveSince(start, evs)
	sample.running = sample.curve[n-1]
	select {
	case st := <-complete:
		if st.err != nil {
			return rolloutSample{}, st.err
		}
		sample.status = st.at.Sub(start)
	case <-time.After(changeTimeout):
		return rolloutSample{}, fmt.Errorf("no status with Progressing/%s and updatedReplicas %d within %s", api.ReasonRolloutComplete, n, changeTimeout)
	case <-ctx.Done():
		return rolloutSample{}, ctx.Err()
	}
	sample.done = max(sample.running, sample.status)

	// the status said complete: exactly n containers are left, all new
	running, err := e.waitRunning(ctx, id, n)
	if err != nil {
		return rolloutSample{}, err
	}
	for _, c := range running {
		if old[c.ID] || c.Image != img {
			return rolloutSample{}, fmt.Errorf("rollout complete, but %s (%.12s) runs %s, an old container or image", c.Names, c.ID, c.Image)
		}
	}
	callsAfter, err := e.dockerCalls(ctx)
	if err != nil {
		return rolloutSample{}, err
	}
	sample.calls = callsSince(callsBefore, callsAfter)
	return sample, nil
}

// statusSeen is when a watched status said what was waited for, or why it
// never will.
type statusSeen struct {
	at  time.Time
	err error
}

// watchRolloutComplete watches controller id's status and sends, once,
// when a status of a spec newer than revision after says its rollout of n
// replicas is complete; or an error when one says the spec is invalid or
// the rollout exceeded its progress deadline. The watch is in place when
// it returns; it ends with ctx.
func (e *dockerEnv) watchRolloutComplete(ctx context.Context, id string, n int, after int64) (<-chan statusSeen, error) {
	watch := e.daemon.client.Watch(ctx, e.daemon.store.StatusKey(id), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return nil, fmt.Errorf("watch status: %w", resp.Err())
	}
	out := make(chan statusSeen, 1)
	go func() {
		for resp := range watch {
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut {
					continue
				}
				at := time.Now()
				st, err := api.DecodeStatus(ev.Kv.Value)
				if err != nil || st.ObservedRevision <= after {
					continue
				}
				if seen, ok := rolloutOutcome(st, n); ok {
					seen.at = at
					out <- seen
					return
				}
			}
		}
	}()
	return out, nil
}

// rolloutOutcome reports whether st ends the wait for a rollout of n
// replicas: complete (no error), or never to complete (an error).
func rolloutOutcome(st *api.ReplicationControllerStatus, n int) (statusSeen, bool) {
	if c := st.FindCondition(api.ConditionInvalidSpec); c != nil {
		return statusSeen{err: fmt.Errorf("spec refused: %s", c.Message)}, true
	}
	c := st.FindCondition(api.ConditionProgressing)
	switch {
	case c == nil:
		return statusSeen{}, false
	case c.Status == "False":
		return statusSeen{err: fmt.Errorf("rollout failed: %s: %s", c.Reason, c.Message)}, true
	case c.Reason == api.ReasonRolloutComplete && st.UpdatedReplicas == n && st.Replicas == n:
		return statusSeen{}, true
	}
	return statusSeen{}, false
}
