package registry

// This file is the part of the plan that brings the count to replicas and
// the containers to the current template (DESIGN.md section 10). It is
// pure, as the rest of plan.
//
// A rolling update replaces outdated containers (their template hash is
// not the spec's) one slot at a time, within two bounds resolved against
// replicas: never more than replicas + maxSurge live containers, never
// fewer than replicas - maxUnavailable available ones (ready for
// minReadySeconds). A container that does not become available therefore
// stops the rollout by itself: it keeps the available count down, and
// with it what may be taken away next.
//
// A slot's name belongs to one container. Without a surge, the outdated
// container of a slot is deleted and its successor created in the same
// sync (stop-first). With a surge, the outdated container is renamed out
// of the slot and the successor created under the slot's name
// (start-first); the renamed one is deleted once the successor is
// available.

import (
	"fmt"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// rolloutProgress is what the record keeps of a rollout, to tell progress
// from a stall.
type rolloutProgress struct {
	hash     string    // the template rolled to
	started  time.Time // when the manager first acted on it
	progress time.Time // when the rollout last moved
	// updatedAvailable and outdated are the counts the rollout last moved
	// to: more of the first, or fewer of the second, is progress.
	updatedAvailable, outdated int
	// done is set once the rollout completed.
	done bool
	// replacing says outdated containers ran when the rollout began: a
	// rollout proper, not a controller's first containers.
	replacing bool
}

// planCount scales the controller to replicas and rolls its outdated
// containers. removing are the controller's containers Docker is removing
// already; blocked are the slots held by containers outside the set.
func planCount(in planInput, d *decision, removing []api.Task, blocked map[int]string) {
	ds := &in.spec.DesiredState
	desired := in.desired()
	strategy := ds.Strategy()
	minReady := time.Duration(ds.MinReadySeconds) * time.Second
	avail := func(t api.Task) bool { return available(t, minReady, in.now) }

	if in.slots != nil {
		planUnassigned(in, d)
	}
	named := make([]api.Task, 0, len(d.active)) // holding their slot's name
	var renamed []api.Task                      // or not
	for _, t := range d.active {
		if holdsSlot(in.id, t) {
			named = append(named, t)
		} else {
			renamed = append(renamed, t)
		}
	}

	if extra := len(named) - desired; extra > 0 {
		n := min(extra, in.burst)
		d.deletes = append(d.deletes, rankForDeletion(named, in.hash)[:n]...)
		d.more = n < extra
		planRenamedCleanup(in, d, renamed, named, avail)
		return
	}

	freed := map[int]bool{} // slots whose container goes this sync, to be created again
	if strategy.Type == api.RollingUpdate && !ds.Paused && createWait(d, in.now) == 0 {
		// the bounds are the controller's, over every node: o is what the
		// other nodes last reported (nothing on one host)
		o := in.others
		total := ds.Replicas
		surge, unavailable := strategy.Bounds(total)
		minAvailable := total - unavailable
		deleted, tookAvailable := planRenamedCleanup(in, d, renamed, named, avail)
		live := len(d.active) - deleted + o.live
		b := bounds{
			// what a surge may add, once the creates of a scale-up are counted
			room: total + surge - live - max(0, desired-len(named)),
			// how many available ones may go
			available: countAvailable(d.active, avail) + o.available - tookAvailable - minAvailable,
			// how many may go at all, as Kubernetes counts it: successors
			// not yet available count against it, so that containers that
			// are merely not available yet (minReadySeconds) do not all go
			// at once
			scaleDown: live - minAvailable - unavailableSuccessors(in, d.active, avail) - o.unavailable,
		}
		if !o.ahead {
			planReplacements(in, d, named, b, freed, avail)
		}
	} else {
		planRenamedCleanup(in, d, renamed, named, avail)
	}

	taken := make(map[int]bool, len(named)+len(removing))
	for _, t := range named {
		if slot := slotOf(t); !freed[slot] {
			taken[slot] = true
		}
	}
	for _, t := range removing {
		if holdsSlot(in.id, t) {
			taken[slotOf(t)] = true
		}
	}
	if missing := desired - len(named) + len(freed); missing > 0 {
		planCreates(in, d, missing, taken, blocked)
	}
}

// planRenamedCleanup deletes the outdated containers that were renamed out
// of their slot for a successor started first, once the successor is
// available or the slot is gone (a scale-down). It returns how many it
// deletes, and how many of those were available.
func planRenamedCleanup(in planInput, d *decision, renamed, named []api.Task, avail func(api.Task) bool) (deleted, tookAvailable int) {
	if len(renamed) == 0 {
		return 0, 0
	}
	successorReady := make(map[int]bool, len(named))
	for _, t := range named {
		if t.Labels[api.LabelTemplateHash] == in.hash && avail(t) {
			successorReady[slotOf(t)] = true
		}
	}
	for _, t := range renamed {
		if slot := slotOf(t); successorReady[slot] || !in.wants(slot) {
			d.deletes = append(d.deletes, t)
			d.rolled = true
			deleted++
			if avail(t) {
				tookAvailable++
			}
		}
	}
	return deleted, tookAvailable
}

// bounds are what a rollout step may still do.
type bounds struct {
	room      int // containers a surge may add
	available int // available containers that may go
	scaleDown int // containers that may go, available or not
}

// planReplacements replaces outdated containers that hold their slot's
// name, the least useful first (rankForDeletion): while room allows a
// surge, by starting the successor first; otherwise by stopping first, an
// unavailable one within scaleDown, an available one within both
// scaleDown and available. Each freed slot is created again with the
// current template.
func planReplacements(in planInput, d *decision, named []api.Task, b bounds, freed map[int]bool, avail func(api.Task) bool) {
	var outdated []api.Task
	for _, t := range named {
		if t.Labels[api.LabelTemplateHash] != in.hash {
			outdated = append(outdated, t)
		}
	}
	if len(outdated) == 0 {
		return
	}
	steps := 0
	for _, t := range rankForDeletion(outdated, in.hash) {
		if steps == in.burst {
			d.more = true
			break
		}
		slot := slotOf(t)
		switch {
		case b.room > 0:
			d.renames = append(d.renames, rename{task: t, name: outdatedName(in.id, slot, t.ID)})
			b.room--
		case !avail(t) && b.scaleDown > 0:
			d.deletes = append(d.deletes, t)
			b.scaleDown--
		case avail(t) && b.available > 0 && b.scaleDown > 0:
			d.deletes = append(d.deletes, t)
			b.available--
			b.scaleDown--
		default:
			continue // a later one may still fit (an unavailable one within scaleDown)
		}
		freed[slot] = true
		steps++
		d.rolloutSteps++
		d.rolled = true
		d.event(api.EventNormal, "RollingUpdate", "replacing %s (template %s) with template %s", t.Name, t.Labels[api.LabelTemplateHash], in.hash)
	}
}

// unavailableSuccessors counts the containers of the current template that
// are not available yet.
func unavailableSuccessors(in planInput, active []api.Task, avail func(api.Task) bool) int {
	n := 0
	for _, t := range active {
		if t.Labels[api.LabelTemplateHash] == in.hash && !avail(t) {
			n++
		}
	}
	return n
}

// available reports whether t has been ready for minReady at now.
func available(t api.Task, minReady time.Duration, now time.Time) bool {
	if !t.Ready() {
		return false
	}
	since := t.StartedAt
	if since.IsZero() {
		since = t.Created
	}
	return now.Sub(since) >= minReady
}

func countAvailable(tasks []api.Task, avail func(api.Task) bool) int {
	n := 0
	for _, t := range tasks {
		if avail(t) {
			n++
		}
	}
	return n
}

// progressing returns the Progressing condition of a controller whose
// active containers are active, and the rollout record after it. A rollout
// moves when more containers of the current template are available, or
// fewer outdated ones run; one that has not moved for the progress
// deadline is reported failed.
func progressing(in planInput, active []api.Task, prev rolloutProgress) (api.Condition, rolloutProgress, time.Duration) {
	ds := &in.spec.DesiredState
	strategy := ds.Strategy()
	minReady := time.Duration(ds.MinReadySeconds) * time.Second
	updated, updatedAvailable, outdated := 0, 0, 0
	for _, t := range active {
		if t.Labels[api.LabelTemplateHash] != in.hash {
			outdated++
			continue
		}
		updated++
		if available(t, minReady, in.now) {
			updatedAvailable++
		}
	}
	r := prev
	if r.hash != in.hash {
		r = rolloutProgress{hash: in.hash, started: in.now, progress: in.now, updatedAvailable: updatedAvailable, outdated: outdated, replacing: outdated > 0}
	}
	if updatedAvailable > r.updatedAvailable || outdated < r.outdated || ds.Paused {
		r.progress = in.now
	}
	r.updatedAvailable, r.outdated = updatedAvailable, outdated
	desired := in.desired()
	message := fmt.Sprintf("%d of %d updated, %d available", updated, desired, updatedAvailable)
	switch {
	case outdated == 0 && updatedAvailable >= desired:
		r.done = true
		return api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRolloutComplete, Message: message}, r, 0
	case strategy.Type == api.OnDelete:
		return api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate,
			Message: message + "; OnDelete: outdated containers are replaced only when they go"}, r, 0
	case ds.Paused:
		return api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate, Message: message + "; paused"}, r, 0
	}
	r.done = false
	deadline := time.Duration(*strategy.ProgressDeadlineSeconds) * time.Second
	if stalled := in.now.Sub(r.progress); stalled >= deadline {
		return api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonProgressDeadlineExceeded,
			Message: fmt.Sprintf("%s; no progress for %s", message, stalled.Round(time.Second))}, r, 0
	}
	return api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate, Message: message},
		r, deadline - in.now.Sub(r.progress)
}
