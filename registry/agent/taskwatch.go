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
// what it returned (createContainer).

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
	retry := registry.NewRetry()
	for ctx.Err() == nil {
		start := time.Now()
		err := rm.followTasks(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			retry.WentWell() // it worked for a while: start over
		}
		rm.metrics.dockerWatchRestarts.Inc()
		if !retry.Wait(ctx, func(delay time.Duration) {
			rm.logger.Warn("docker event stream lost; listing again", "retryIn", delay, "err", err)
		}) {
			return
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

// createContainer creates one container of controller id and writes it to
// the cache. Its create and start events, which arrive before the create
// returns, are held meanwhile and then applied to what the create
// returned, so that they cost no inspect; one that tells of a change since
// (it died already) queues the controller. A create that failed after the
// engine made a container (the removal of a container that did not start
// failed too, or the call was cut off) leaves one the cache does not know:
// it is inspected.
func (rm *Agent) createContainer(ctx context.Context, id string, spec api.TaskSpec) (api.Task, error) {
	rm.tasks.creating(spec.Name)
	finished := false
	defer func() {
		if !finished {
			// the create panicked: that name's events are held no longer
			rm.tasks.createDone(spec.Name)
		}
	}()
	t, err := rm.taskControl.CreateTask(ctx, spec)
	var changed, inspect bool
	if err == nil {
		changed, inspect = rm.tasks.created(t)
		rm.tellGraceCapped(id, spec)
	}
	unknown := rm.tasks.createDone(spec.Name)
	finished = true
	if inspect {
		unknown = append(unknown, t.ID)
	}
	for _, taskID := range unknown {
		// ctx may be what cut the create off
		inspectCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		c, inspectErr := rm.inspectTask(inspectCtx, taskID)
		cancel()
		changed = changed || c || inspectErr != nil
	}
	if changed || len(unknown) > 0 {
		rm.queueController(id)
	}
	return t, err
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
