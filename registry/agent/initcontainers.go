package agent

// This file runs a task's init containers (docs/CONTRACT.md, Init
// containers): before the task's first container is created, each one in
// the manifest's order is created, waited for to its exit, and removed
// when it exits 0. One that exits otherwise ends the create with an
// initFailure, which settle turns into ReplicaFailure InitFailed and the
// crash-loop backoff; it is kept, under its name, for inspection until
// the slot's next try removes it. One still running when its slot is no
// longer this node's, or no longer of its template, is stopped as any
// container is (its stop signal, grace period and preStop).
//
// The run is part of the create, so of the controller's sync: while a
// slot's init containers run, the node holds the slot (its report lists
// it), and the controller's next sync waits. Init containers are never
// counted: the sync sets them apart before it plans (splitInits), and
// the plan only removes the ones no create is running.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// initOutputLines is how many of a failed init container's last lines of
// output the status carries.
const initOutputLines = 10

// initAssignmentPoll is how often a running init container's slot is
// looked at, to stop it once the slot is no longer this node's.
const initAssignmentPoll = 200 * time.Millisecond

// errInitStopped says a slot's init container was stopped because the
// slot is no longer this node's, or no longer of its template: no failure
// of the template.
var errInitStopped = errors.New("init container stopped: its slot changed")

// initFailure is an init container that exited with a code other than 0.
type initFailure struct {
	// name is the init container's name in the manifest; container the
	// name of the container, kept for inspection, and id its id.
	name, container, id string
	slot                int
	exitCode            int
	output              string
}

func (e *initFailure) Error() string {
	msg := fmt.Sprintf("init container %s (%s) exited with code %d", e.name, e.container, e.exitCode)
	if out := strings.TrimSpace(e.output); out != "" {
		msg += "; last output:\n" + out
	}
	return msg
}

// runInits runs the init containers of c one after another; nil when each
// exited 0 (or there are none).
func (rm *Agent) runInits(ctx context.Context, id string, c taskCreate) error {
	for _, spec := range c.inits {
		if err := rm.removeKeptInit(ctx, id, spec.Name); err != nil {
			return err
		}
		t, err := rm.createContainer(ctx, id, spec)
		rm.metrics.countContainerOp("create", err)
		switch {
		case errors.Is(err, api.ErrTaskNameConflict):
			// as text: a name conflict here is no slot held
			return fmt.Errorf("create init container %s: %s", spec.Name, err.Error())
		case err != nil:
			return fmt.Errorf("create init container %s: %w", spec.Name, err)
		}
		rm.logger.Info("init container started", "controller", id, "container", spec.Name)
		exit, err := rm.waitInit(ctx, id, t)
		if err != nil {
			return errors.Join(err, rm.stopInit(ctx, t))
		}
		if exit.ExitCode != 0 {
			// kept for inspection; the sync's error and event say so once
			return &initFailure{name: spec.Labels[api.LabelContainer], container: spec.Name, id: t.ID, slot: slotOf(t),
				exitCode: exit.ExitCode, output: exit.Output}
		}
		if err := rm.deleteContainer(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// removeKeptInit removes the container of this controller that holds
// name, the init container a failed try kept; none is no error.
func (rm *Agent) removeKeptInit(ctx context.Context, id, name string) error {
	tasks, _ := rm.tasks.list(id)
	for _, t := range tasks {
		if t.Name == name && api.IsInit(t.Labels) && api.OfRegistry(rm.registryID, t.Labels) {
			return rm.deleteContainer(ctx, t)
		}
	}
	return nil
}

// waitInit waits for init container t to end, and stops waiting with
// errInitStopped when its slot is no longer this node's or its template
// no longer the slot's.
func (rm *Agent) waitInit(ctx context.Context, id string, t api.Task) (api.TaskExit, error) {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		exit api.TaskExit
		err  error
	}
	done := make(chan result, 1)
	go func() {
		exit, err := rm.taskControl.WaitTask(waitCtx, t.ID, initOutputLines)
		done <- result{exit, err}
	}()
	tick := time.NewTicker(initAssignmentPoll)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.exit, r.err
		case <-tick.C:
			if !rm.stillWanted(id, t) {
				return api.TaskExit{}, fmt.Errorf("%s: %w", t.Name, errInitStopped)
			}
		}
	}
}

// stillWanted reports whether init container t's slot is assigned to
// this node, with t's template.
func (rm *Agent) stillWanted(id string, t api.Task) bool {
	a, ok := rm.slots.of(id).Get(slotOf(t))
	return ok && (a.TemplateHash == "" || a.TemplateHash == t.Labels[api.LabelTemplateHash])
}

// stopInit stops and removes an init container whose wait ended without
// its exit, the way every container is stopped. ctx may be what ended the
// wait (the node stops): the container is then left to the next start.
func (rm *Agent) stopInit(ctx context.Context, t api.Task) error {
	select {
	case <-ctx.Done():
		return nil // left to the next start, which removes it
	default:
		return rm.deleteContainer(ctx, t)
	}
}

// splitInits sets the init containers apart from the controller's other
// containers: they are never counted.
func splitInits(tasks []api.Task) (others, inits []api.Task) {
	if !slices.ContainsFunc(tasks, func(t api.Task) bool { return api.IsInit(t.Labels) }) {
		return tasks, nil // the usual case: nothing to set apart, nothing to copy
	}
	others = tasks[:0:0]
	for _, t := range tasks {
		if api.IsInit(t.Labels) {
			inits = append(inits, t)
		} else {
			others = append(others, t)
		}
	}
	return others, inits
}

// planInits removes the init containers no create is running (the sync
// that plans runs none): each left by a node that stopped, or by a create
// cut off, and each that failed, but the one the slot's last try kept for
// inspection (controllerState.keptInits) while the slot is still this
// node's, of that template, and waiting for its task. It tells the kept
// one by its id, not by its state in the cache, which may not have seen
// its death yet. Pure, as the rest of plan.
func planInits(in planInput, d *decision) {
	var kept map[int]string
	for _, t := range in.inits {
		if claimOf(in.registryID, in.id, nil, t.Labels) != claimOwned {
			continue
		}
		slot := slotOf(t)
		if in.state.keptInits[slot] == t.ID && in.wants(slot) && t.Labels[api.LabelTemplateHash] == in.hashOf(slot) &&
			!slotRuns(d.active, in.id, slot) {
			if kept == nil {
				kept = map[int]string{}
			}
			kept[slot] = t.ID
			continue
		}
		d.deletes = append(d.deletes, t)
	}
	d.state.keptInits = kept
}

// keepFailedInits returns kept with the failed init containers among errs
// added, each the one its slot keeps.
func keepFailedInits(kept map[int]string, errs []error) map[int]string {
	out := maps.Clone(kept)
	for _, err := range errs {
		var f *initFailure
		if errors.As(err, &f) {
			if out == nil {
				out = map[int]string{}
			}
			out[f.slot] = f.id
		}
	}
	return out
}

// slotRuns reports whether a container among active holds slot's name.
func slotRuns(active []api.Task, id string, slot int) bool {
	for _, t := range active {
		if holdsSlot(id, t) && slotOf(t) == slot {
			return true
		}
	}
	return false
}
