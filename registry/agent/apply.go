package agent

// This file carries a plan out through the task control: renames first,
// then deletes, then creates, so that a slot's name is free before its new
// container asks for it. It writes every change through to the container
// cache at once, logs each container it changes, and returns what happened
// for settle to report. It decides nothing the plan has not.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/replication-manager/replication-manager/api"
)

// apply runs the actions of d for controller id.
func (rm *Agent) apply(ctx context.Context, id string, d decision) outcome {
	var out outcome
	deletes := d.deletes
	var held map[string]bool // slot names a failed rename or delete left taken
	hold := func(name string) {
		if held == nil {
			held = make(map[string]bool)
		}
		held[name] = true
	}
	if len(d.orphans) > 0 {
		_, errs := rm.deleteTasks(ctx, d.orphans)
		out.errs = append(out.errs, errs...)
	}
	for _, r := range d.renames {
		if r.dead && d.groups[r.task.ID] {
			// a task of several containers is not kept for inspection:
			// its parts would hold their names, and some still run
			deletes = append(deletes, r.task)
			continue
		}
		err := rm.renameTask(ctx, r.task, r.name, d.groups[r.task.ID])
		switch {
		case err != nil && r.dead:
			// free the slot anyway: the replacement needs its name
			out.errs = append(out.errs, fmt.Errorf("keep dead container %s for inspection: %w", r.task.Name, err))
			deletes = append(deletes, r.task)
		case err != nil:
			// a live container keeps its slot, and its successor waits
			out.errs = append(out.errs, fmt.Errorf("rename %s out of its slot for its successor: %w", r.task.Name, err))
			hold(r.task.Name)
		case r.dead:
			rm.tasks.renamed(r.task.ID, r.name)
			rm.logger.Info("dead container kept for inspection", "controller", id, "container", r.name)
		default:
			rm.tasks.renamed(r.task.ID, r.name)
			rm.logger.Info("outdated container renamed out of its slot; its successor starts first", "controller", id, "container", r.name)
		}
	}

	for _, t := range d.unhealthy {
		rm.record(id, rm.unhealthyNote(ctx, t, d.groups[t.ID]))
	}
	out.deleted, out.deleteErrs = rm.deleteTasks(ctx, deletes)
	if len(out.deleteErrs) > 0 {
		for _, t := range withoutTasks(deletes, out.deleted) {
			hold(t.Name)
		}
	}

	creates := make([]taskCreate, 0, len(d.creates))
	for _, c := range d.creates {
		if !held[c.Name] {
			creates = append(creates, c)
		}
	}
	if len(creates) == 0 {
		return out
	}
	if !rm.readyImages(ctx, id, d, creates, &out) {
		return out
	}
	rm.createTasks(ctx, id, creates, d.slowStart, &out)
	return out
}

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

// deleteTasks stops and removes tasks, as many at a time as the burst
// limit allows. It returns the tasks that are gone and the errors of those
// that are not.
func (rm *Agent) deleteTasks(ctx context.Context, tasks []api.Task) (deleted []api.Task, errs []error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	results := make([]error, len(tasks))
	slots := make(chan struct{}, rm.opts.BurstReplicas)
	listed := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		listed[t.ID] = true
	}
	var wg sync.WaitGroup
	for i, t := range tasks {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			results[i] = rm.deleteTask(ctx, t, listed)
		})
	}
	wg.Wait()
	for i, err := range results {
		if err != nil {
			errs = append(errs, err)
		} else {
			deleted = append(deleted, tasks[i])
		}
	}
	return deleted, errs
}
