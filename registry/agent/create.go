package agent

// This file is a sync's creates, top-down: the tasks all at once or, after
// a failed create, in slow-start batches (createTasks); each task its
// volumes, its init containers, its first container, then its parts, and
// nothing of it left when a step fails (createTask); each container
// written into the cache as it is made, its events held meanwhile
// (createContainer); and a slot's name found taken (resolveConflict).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// createTasks creates the containers, all at once or, after a failure, in
// slow-start batches, and records in out what was created, what failed and
// which slots another container holds.
func (rm *Agent) createTasks(ctx context.Context, id string, specs []taskCreate, slowStart bool, out *outcome) {
	created := make([]*api.Task, len(specs))
	conflicts := make([]bool, len(specs))
	initial := len(specs)
	if slowStart {
		initial = 1
	}
	_, errs := slowStartBatch(len(specs), initial, func(i int) error {
		task, err := rm.createTask(ctx, id, specs[i])
		switch {
		case errors.Is(err, api.ErrTaskNameConflict):
			conflicts[i] = true
			return nil // not a failure of the template
		case errors.Is(err, errInitStopped):
			rm.logger.Info("init container stopped: its slot changed", "controller", id, "err", err)
			return nil // not a failure either
		case err != nil:
			return err
		}
		created[i] = &task
		return nil
	})
	out.createErrs = append(out.createErrs, errs...)
	for i, t := range created {
		if t != nil {
			out.created = append(out.created, *t)
		}
		if conflicts[i] {
			rm.resolveConflict(ctx, id, specs[i].TaskSpec, out)
		}
	}
}

// createTask makes the task c and returns its first container. A name
// conflict of the first container is returned as it is (the slot is
// held); any other failure leaves nothing of the task behind.
func (rm *Agent) createTask(ctx context.Context, id string, c taskCreate) (api.Task, error) {
	for _, v := range c.volumes {
		if _, err := rm.taskControl.CreateVolume(ctx, v); err != nil {
			return api.Task{}, fmt.Errorf("create volume %s: %w", v.Name, err)
		}
	}
	if err := rm.runInits(ctx, id, c); err != nil {
		// a failed init container kept for inspection keeps its volumes
		// (one in use stays) for the slot's next try
		return api.Task{}, errors.Join(err, rm.removeVolumes(ctx, c.volumes))
	}
	first, err := rm.createContainer(ctx, id, c.TaskSpec)
	rm.metrics.countContainerOp("create", err)
	if err != nil {
		return api.Task{}, errors.Join(err, rm.removeVolumes(ctx, c.volumes))
	}
	rm.logger.Info("container created", "controller", id, "container", c.Name)
	for _, p := range c.parts {
		_, err := rm.createContainer(ctx, id, p)
		rm.metrics.countContainerOp("create", err)
		if err != nil {
			// half a task is no task; the error as text, as a part's name conflict is a
			// failure of the task, not a slot held (so not wrapped)
			return api.Task{}, errors.Join(fmt.Errorf("create %s: %s", p.Name, err.Error()), rm.deleteTask(ctx, first, nil))
		}
		rm.logger.Info("container created", "controller", id, "container", p.Name)
	}
	return first, nil
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

// resolveConflict finds out who holds a slot's name that a create found
// taken. A container labelled for this controller that the cache has not
// seen yet goes into the cache, and the sync looks again; any other
// container blocks the slot, and the replicas use another.
func (rm *Agent) resolveConflict(ctx context.Context, id string, spec api.TaskSpec, out *outcome) {
	holder, err := rm.taskControl.InspectTask(ctx, spec.Name)
	switch {
	case errors.Is(err, api.ErrTaskNotFound):
		out.retry = true // gone in between: try again
		return
	case err != nil:
		out.errs = append(out.errs, fmt.Errorf("create %s: name taken, and %w", spec.Name, err))
		return
	}
	if holder.Labels[api.LabelController] == id {
		// labelled for this controller: the cache lagged behind Docker;
		// once it knows the container, the plan counts it or, outside
		// the set, leaves its slot alone
		rm.tasks.observe(holder)
		out.retry = true
		return
	}
	what := "not labelled for this controller (started by hand?)"
	if out.conflicts == nil {
		out.conflicts = make(map[int]slotConflict)
	}
	out.conflicts[slotOf(api.Task{Labels: spec.Labels})] = slotConflict{
		holder: fmt.Sprintf("%s (%s), %s", spec.Name, shortID(holder.ID), what),
		seen:   rm.now(),
	}
	rm.logger.Warn("slot name held by a container outside the controller's set; using another slot",
		"controller", id, "container", spec.Name, "holder", shortID(holder.ID))
}
