package agent

// This file carries a plan out through the task control: renames first,
// then deletes, then creates, so that a slot's name is free before its new
// container asks for it. It writes every change through to the container
// cache at once, logs each container it changes, and returns what happened
// for settle to report. It decides nothing the plan has not.

import (
	"context"
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
