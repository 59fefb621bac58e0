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
	// name of the container, kept for inspection.
	name, container string
	exitCode        int
	output          string
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
		if err != nil {
			// as text: a name conflict here is no slot held
			return fmt.Errorf("create init container %s: %s", spec.Name, err.Error())
		}
		rm.logger.Info("init container started", "controller", id, "container", spec.Name)
		exit, err := rm.waitInit(ctx, id, t)
		if err != nil {
			return errors.Join(err, rm.stopInit(ctx, t))
		}
		if exit.ExitCode != 0 {
			rm.logger.Warn("init container failed; kept for inspection", "controller", id, "container", spec.Name, "exitCode", exit.ExitCode)
			return &initFailure{name: spec.Labels[api.LabelContainer], container: spec.Name, exitCode: exit.ExitCode, output: exit.Output}
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
	a, ok := rm.slots.of(id)[slotOf(t)]
	return ok && (a.TemplateHash == "" || a.TemplateHash == t.Labels[api.LabelTemplateHash])
}

// stopInit stops and removes an init container whose wait ended without
// its exit, the way every container is stopped. ctx may be what ended the
// wait (the node stops): the container is then left to the next start.
func (rm *Agent) stopInit(ctx context.Context, t api.Task) error {
	if ctx.Err() != nil {
		return nil
	}
	return rm.deleteContainer(ctx, t)
}

// splitInits sets the init containers apart from the controller's other
// containers: they are never counted.
func splitInits(tasks []api.Task) (others, inits []api.Task) {
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
// that plans runs none): each that is left from a node that stopped, and
// each that failed, unless it is the newest failure of a slot still this
// node's and still waiting for its task, kept for inspection until the
// slot's next try. Pure, as the rest of plan.
func planInits(in planInput, d *decision) {
	kept := map[int]api.Task{}
	for _, t := range in.inits {
		if claimOf(in.registryID, in.id, nil, t.Labels) != claimOwned {
			continue
		}
		slot := slotOf(t)
		failed := !t.Active() && t.State != api.StateCreated && t.ExitCode != 0
		if !failed || !in.wants(slot) || t.Labels[api.LabelTemplateHash] != in.hashOf(slot) || slotRuns(d.active, in.id, slot) {
			d.deletes = append(d.deletes, t)
			continue
		}
		if k, ok := kept[slot]; ok {
			if newerDeath(t, k) {
				kept[slot] = t
				t = k
			}
			d.deletes = append(d.deletes, t)
			continue
		}
		kept[slot] = t
	}
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
