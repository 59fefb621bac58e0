package agent

// This file keeps the container cache in step with Docker: subscribe to the
// events of containers carrying the ownership label, list, then apply the
// events, each one inspected, and queue the controller concerned. When the
// stream breaks, it starts over; the periodic resync lists again anyway.

import (
	"context"
	"errors"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// watchTasks follows Docker until ctx ends, retrying with backoff while
// Docker is away.
func (rm *Agent) watchTasks(ctx context.Context) {
	backoff := registry.RetryBackoff()
	for ctx.Err() == nil {
		start := time.Now()
		err := rm.followTasks(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = registry.RetryBackoff() // it worked for a while: start over
		}
		delay := backoff.Step()
		rm.metrics.dockerWatchRestarts.Inc()
		rm.logger.Warn("docker event stream lost; listing again", "retryIn", delay, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// followTasks subscribes, lists, then applies events until the stream
// fails. Subscribing first means nothing that happens during the list is
// missed.
func (rm *Agent) followTasks(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errc := rm.taskControl.Events(ctx, api.LabelController)
	if err := rm.relistTasks(ctx); err != nil {
		return err
	}
	for ev := range events {
		if err := rm.applyTaskEvent(ctx, ev); err != nil {
			return err
		}
	}
	if err := <-errc; err != nil {
		return err
	}
	return errors.New("docker events: stream closed")
}

// relistTasks replaces the cache with a fresh list of every container and
// queues the controllers whose containers changed. Lists run one at a time
// (the event stream's and a resync's may coincide), so that a list never
// lands on top of a newer one. The first list queues every controller:
// syncs that failed for want of it should not wait for their backoff.
func (rm *Agent) relistTasks(ctx context.Context) error {
	rm.relistMu.Lock()
	defer rm.relistMu.Unlock()
	since := rm.tasks.startList()
	first := !rm.tasks.isSynced()
	tasks, err := rm.taskControl.ListTasks(ctx, map[string]string{api.LabelController: api.AnyLabelValue})
	if err != nil {
		return err
	}
	changed := rm.tasks.replace(tasks, since, rm.now())
	if first {
		rm.later(rm.specs.ids()...) // every controller, now that they can sync
	}
	for _, id := range changed {
		rm.queueController(id)
	}
	return nil
}

// applyTaskEvent updates the cache from one event and queues the
// controller. Only a failure to reach Docker is returned.
func (rm *Agent) applyTaskEvent(ctx context.Context, ev api.TaskEvent) error {
	id := ev.Labels[api.LabelController]
	if claimOf(rm.registryID, id, nil, ev.Labels) == claimNone {
		return nil // another registry's container
	}
	switch ev.Action {
	case "destroy":
		if rm.tasks.isGone(ev.ID) {
			return nil // the manager's own delete: the sync that made it planned what follows
		}
		rm.tasks.deleted(ev.ID, rm.now())
	case "create", "start", "restart", "die", "pause", "unpause", "health_status", "rename", "oom":
		t, err := rm.taskControl.InspectTask(ctx, ev.ID)
		switch {
		case errors.Is(err, api.ErrTaskNotFound):
			rm.tasks.deleted(ev.ID, rm.now())
		case err != nil:
			return err
		case !rm.tasks.observe(t):
			return nil // nothing the sync looks at changed
		}
	default:
		return nil // exec, attach, kill (a die follows), ...
	}
	rm.queueController(id)
	return nil
}

// queueController queues id if it is a controller of this registry, now or
// before; containers labelled for other ids are not ours.
func (rm *Agent) queueController(id string) {
	if id == "" {
		return
	}
	if _, exists, _ := rm.specs.get(id); exists || rm.wasManaged(id) {
		rm.queue.Add(id)
	}
}
