package agent

// This file is the node's word that a container ran through its monitor
// window (docs/CONTRACT.md, Updates): once a container has run for the
// controller's window, max(minReadySeconds, monitorSeconds), by the
// node's clock, the node asks its engine whether it still runs since the
// same start, and its report says so (ReportedTask.Monitored). The leader
// counts a container for a rollout's next step only on that word, and the
// node retires a container whose successor started first only on it too.
// The cache alone would not do: it learns of an exit from an event, which
// a loaded engine or node may deliver seconds late, and a report that has
// not changed since a container started says nothing of whether it still
// runs.

import (
	"context"
	"errors"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// monitored reports whether the engine's word covers t's window: an
// answer sent at least window after t started said that it runs. With no
// window, running is enough.
func monitored(t api.Task, window time.Duration) bool {
	return t.State == api.StateRunning && (window <= 0 || t.CheckedAt.Sub(startedAt(t)) >= window)
}

// untilWindowEnds is how long until the first window of active's ready
// tasks that no answer covers yet ends, when the sync looks again and
// asks the engine; 0 when none will.
func untilWindowEnds(active []api.Task, window time.Duration, now time.Time) time.Duration {
	var next time.Duration
	if window <= 0 {
		return 0
	}
	for _, t := range active {
		if t.Ready() && !monitored(t, window) {
			next = registry.Sooner(next, window-now.Sub(startedAt(t)))
		}
	}
	return next
}

// checkWindows asks the engine about each of the controller's tasks whose
// window has ended by the node's clock but that no answer has covered yet:
// firsts are the tasks (grouping's), all their containers. A task that is
// not ready is left alone: it is not available whatever the engine says,
// and its turn to ready brings a sync. It returns whether an answer was
// put into the cache (the sync reads it again), and the errors.
func (rm *Agent) checkWindows(ctx context.Context, in planInput, all, firsts []api.Task) (asked bool, errs []error) {
	window := in.spec.DesiredState.AvailableAfter()
	if window <= 0 {
		return false, nil
	}
	selector := in.spec.DesiredState.ReplicasInSet
	for _, t := range firsts {
		if !t.Ready() || monitored(t, window) || in.now.Sub(startedAt(t)) < window ||
			claimOf(in.registryID, in.id, selector, t.Labels) != claimOwned {
			continue
		}
		for _, c := range all {
			if c.ID != t.ID && c.JoinedTo != t.ID {
				continue
			}
			asked = true
			full, err := rm.taskControl.InspectTask(ctx, c.ID)
			switch {
			case errors.Is(err, api.ErrTaskNotFound):
				rm.tasks.deleted(c.ID, rm.now())
			case err != nil:
				errs = append(errs, err)
			default:
				rm.tasks.observe(full)
			}
		}
	}
	return asked, errs
}
