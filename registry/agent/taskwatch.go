package agent

// This file keeps the container cache in step with Docker: subscribe to the
// events of containers carrying the ownership label, list, then apply the
// events and queue the controller concerned. When the stream breaks, it
// starts over, and so lists again; the periodic pass (manager.go) lists
// again every --relist-period besides.
//
// An event updates the cache from what it tells (the action, its time, a
// die's exit code, a health_status's health, a rename's name), not from an
// inspect: a container the cache knows costs Docker nothing more. Only what
// an event cannot tell is inspected (taskCache.event, eventTask): a
// container the cache does not know (another manager's, one made by hand,
// one the list has not seen), a start whose health check the cache does
// not know, a health_status without a health, a restart. The events of the
// manager's own creates are held until the create returns, and applied to
// what it returned (create.go, createContainer).

import (
	"context"
	"errors"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// watchTasks follows Docker until ctx ends, on a registry.Retry while
// Docker is away. A stream's try never says it got going: one that Docker
// ends right after its list (a socket proxy that refuses events) would
// list again at the first delay for ever. One that ran for the longest
// delay (RetryBackoff's 5s) went well.
func (rm *Agent) watchTasks(ctx context.Context) {
	_ = registry.Retry{Failed: func(err error, delay time.Duration) {
		rm.metrics.dockerWatchRestarts.Inc()
		rm.logger.Warn("docker event stream lost; listing again", "retryIn", delay, "err", err)
	}}.Do(ctx, func() (bool, error) { return false, rm.followTasks(ctx) })
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
	rm.listedAt = rm.now()
	drift := rm.tasks.replace(tasks, since, rm.listedAt)
	rm.digests.retain(tasks)
	switch {
	case first:
		rm.later(rm.specs.ids()...) // every controller, now that they can sync
	case drift.containers > 0:
		// the events did not tell everything: an operator learns from the
		// metric whether they can be trusted, and from the log what they
		// missed
		rm.metrics.cacheDrift.Add(float64(len(drift.controllers)))
		rm.logger.Warn("the container list found the cache wrong: Docker events were lost; syncing what differs",
			"controllers", len(drift.controllers), "containers", drift.containers, "drift", drift.String())
	}
	for _, id := range drift.controllers {
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
	case "create", "start", "restart", "kill", "die", "pause", "unpause", "health_status", "rename", "oom":
		switch rm.tasks.event(ev) {
		case eventUnchanged, eventHeld:
			return nil // nothing the sync looks at changed, or the create under way sees to it
		case eventInspect:
			changed, err := rm.inspectTask(ctx, ev.ID)
			if err != nil || !changed {
				return err
			}
		}
	default:
		return nil // exec, attach, stop (a die came before), ...
	}
	rm.queueController(id)
	return nil
}

// inspectTask reads one container into the cache, for what its events
// cannot tell, and reports whether anything a sync looks at changed. Only
// a failure to reach Docker is returned.
func (rm *Agent) inspectTask(ctx context.Context, taskID string) (bool, error) {
	t, err := rm.taskControl.InspectTask(ctx, taskID)
	switch {
	case errors.Is(err, api.ErrTaskNotFound):
		rm.tasks.deleted(taskID, rm.now())
		return true, nil
	case err != nil:
		return false, err
	}
	return rm.tasks.observe(t), nil
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
