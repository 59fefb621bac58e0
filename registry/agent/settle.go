package agent

// This file turns what apply did into what a sync writes and keeps: the
// status (counts and conditions), the events, the next look and the
// controller's record. settle is pure, as plan is.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// outcome is what apply did.
type outcome struct {
	created []api.Task
	deleted []api.Task
	// createErrs are the failed creates (a missing image counts as one);
	// name conflicts are not among them: they are conflicts.
	createErrs []error
	deleteErrs []error
	// errs are the other failures (a rename), returned with the sync.
	errs []error
	// conflicts are slots found held by a container outside the set.
	conflicts map[int]slotConflict
	// retry says a create met a container of ours the cache had not seen
	// yet: look again at once.
	retry bool
	// waiting are the slots whose creates wait for their images: pulls
	// under way (pulling), or the backoff of a failed one (pullErr, which
	// has pullRetry left).
	waiting   []int
	pulling   []pullingImage
	pullErr   error
	pullRetry time.Duration
	// pullSince is when the creates of a template whose images are pulled
	// Always first asked for a pull, kept until they go out.
	pullSince time.Time
}

// report is what a sync writes and keeps after apply.
type report struct {
	// status to write; nil writes none (a stale or gone controller).
	status *api.ReplicationControllerStatus
	// forget: the controller and its last container are gone.
	forget       bool
	events       []note
	requeueAfter time.Duration
	state        controllerState
	// rolledOut is how long the rollout that completed in this sync took;
	// 0 when none did.
	rolledOut time.Duration
	// continueRollout asks for another look in the second lane.
	continueRollout bool
	// active are the counted containers after apply; inits the init
	// containers that may still run, never counted, whose slots the
	// node holds all the same.
	active []api.Task
	inits  []api.Task
	// blocked are the slots whose names containers outside the set hold,
	// as plan found them and the creates learned.
	blocked []int
	// pulling are the slots waiting for a pull under way.
	pulling []api.PullingSlot
}

// settle turns a decision and what apply did into the status and the
// record.
func settle(in planInput, d decision, out outcome) report {
	if in.invalid != nil {
		return settleInvalid(in, d)
	}
	r := report{state: d.state, events: d.events, requeueAfter: d.requeueAfter}
	requeue := func(after time.Duration) { r.requeueAfter = registry.Sooner(r.requeueAfter, after) }
	if len(out.deleted) > 0 && !d.gone && !d.stale {
		r.events = append(r.events, note{api.EventNormal, "Deleted",
			fmt.Sprintf("deleted %d container(s): %s", len(out.deleted), strings.Join(taskNames(out.deleted), ", "))})
	}
	if len(out.deleteErrs) > 0 {
		r.events = append(r.events, note{api.EventWarning, "FailedDelete", out.deleteErrs[0].Error()})
	}
	r.state.pullSince = out.pullSince
	waiting := len(out.waiting) > 0
	if len(out.deleteErrs) == 0 && len(out.createErrs) == 0 && !waiting {
		switch {
		case d.more:
			requeue(time.Millisecond) // capped by the burst limit: go on at once
		case d.rolled:
			// a rollout step done: the next may be due already, in the
			// second lane; a plan that cannot move yet asks for nothing,
			// and waits for an event or for minReadySeconds instead
			r.continueRollout = true
		}
	}
	if d.gone {
		r.forget = len(out.deleted) == len(d.deletes) && !d.more
		return r
	}
	if d.stale {
		return r
	}

	active := d.active
	if len(out.deleted) > 0 {
		active = withoutTasks(active, out.deleted)
	}
	active = append(active, out.created...)
	if in.spec != nil {
		requeue(untilWindowEnds(active, in.spec.DesiredState.AvailableAfter(), in.now)) // windows.go
	}
	if len(out.created) > 0 {
		r.events = append(r.events, note{api.EventNormal, "Created",
			fmt.Sprintf("created %d container(s): %s", len(out.created), strings.Join(taskNames(out.created), ", "))})
	}
	if len(out.conflicts) > 0 || out.retry {
		conflicts := maps.Clone(r.state.conflicts)
		if conflicts == nil {
			conflicts = make(map[int]slotConflict)
		}
		maps.Copy(conflicts, out.conflicts)
		r.state.conflicts = conflicts
		requeue(time.Millisecond) // fill the slots the conflicts left
	}
	failure := d.failure
	var initFailed *initFailure
	keepFailure := d.keepFailure
	switch {
	case out.pullErr != nil:
		failure = &api.Condition{Type: api.ConditionReplicaFailure, Reason: api.ReasonPullFailed, Message: out.pullErr.Error()}
		requeue(out.pullRetry)
	case len(out.pulling) > 0:
		keepFailure = true // a pull that failed before is tried again
	}
	switch {
	case len(out.createErrs) > 0 && errors.As(out.createErrs[0], &initFailed):
		// the crash-loop backoff, as for a container that crashed
		r.state.initBackoff = r.state.initBackoff.failed(in.now, crashDelays)
		delay := r.state.initBackoff.wait(in.now)
		requeue(delay)
		failure = &api.Condition{Type: api.ConditionReplicaFailure, Reason: api.ReasonInitFailed, Message: initFailed.Error()}
		r.state.keptInits = keepFailedInits(r.state.keptInits, out.createErrs)
		r.events = append(r.events, note{api.EventWarning, api.ReasonInitFailed, fmt.Sprintf("%v (next try in %s)", initFailed, delay)})
	case len(out.createErrs) > 0:
		r.state.createBackoff = r.state.createBackoff.failed(in.now, createDelays)
		r.state.proven = ""
		delay := r.state.createBackoff.wait(in.now)
		requeue(delay)
		failure = &api.Condition{Type: api.ConditionReplicaFailure, Reason: api.ReasonCreateFailed, Message: out.createErrs[0].Error()}
		r.events = append(r.events, note{api.EventWarning, "FailedCreate", fmt.Sprintf("%v (next attempt in %s)", out.createErrs[0], delay)})
	case len(out.created) > 0:
		r.state.createBackoff, r.state.initBackoff = backoff{}, backoff{}
		r.state.proven = d.hash
	}
	if len(out.deleteErrs) > 0 {
		failure = &api.Condition{Type: api.ConditionReplicaFailure, Reason: api.ReasonDeleteFailed, Message: out.deleteErrs[0].Error()}
	}

	now := in.now.UTC()
	st := newStatus(in)
	st.ObservedRevision = in.revision
	st.Conditions = api.ClearCondition(st.Conditions, api.ConditionInvalidSpec)
	var next, settleIn time.Duration
	st.Replicas = len(active)
	st.ReadyReplicas, st.AvailableReplicas, next = countReplicas(active, time.Duration(in.spec.DesiredState.MinReadySeconds)*time.Second, now)
	requeue(next)
	r.state.crashes, settleIn = r.state.crashes.settle(active, in.now)
	requeue(settleIn)
	switch {
	case failure != nil:
		st.Conditions = api.SetCondition(st.Conditions, *failure, now)
	case !keepFailure:
		st.Conditions = api.ClearCondition(st.Conditions, api.ConditionReplicaFailure)
	}
	if c := r.state.crashes.condition(in.now); c != nil {
		st.Conditions = api.SetCondition(st.Conditions, *c, now)
	} else {
		st.Conditions = api.ClearCondition(st.Conditions, api.ConditionCrashLoop)
	}
	st.UpdatedReplicas = 0
	for _, t := range active {
		if t.Labels[api.LabelTemplateHash] == in.hash {
			st.UpdatedReplicas++
		}
	}
	prog, rollout, deadlineIn := progressing(in, active, r.state.rollout)
	if rollout.done && rollout.replacing && !r.state.rollout.done && r.state.rollout.hash == in.hash {
		r.rolledOut = in.now.Sub(rollout.started)
	}
	r.state.rollout = rollout
	requeue(deadlineIn)
	st.Conditions = api.SetCondition(st.Conditions, prog, now)
	r.status = &st
	r.active = active
	for _, t := range in.inits {
		if (t.Active() || t.State == api.StateCreated) && !slices.ContainsFunc(out.deleted, func(g api.Task) bool { return g.ID == t.ID }) {
			r.inits = append(r.inits, t)
		}
	}
	r.blocked = d.blocked
	if len(out.pulling) > 0 {
		for _, slot := range out.waiting {
			r.pulling = append(r.pulling, api.PullingSlot{Slot: slot, Image: out.pulling[0].image, Since: out.pulling[0].since.UTC()})
		}
	}
	if len(out.conflicts) > 0 {
		r.blocked = slices.Clone(r.blocked)
		for slot := range out.conflicts {
			if !slices.Contains(r.blocked, slot) {
				r.blocked = append(r.blocked, slot)
			}
		}
		slices.Sort(r.blocked)
	}
	return r
}

// settleInvalid is the status of a spec that cannot be acted on.
func settleInvalid(in planInput, d decision) report {
	st := newStatus(in)
	reason := api.ReasonInvalidSpec
	if in.undecodable {
		reason = api.ReasonUndecodable
	}
	st.ObservedRevision = in.revision
	st.Conditions = api.SetCondition(st.Conditions, api.Condition{
		Type: api.ConditionInvalidSpec, Reason: reason, Message: in.invalid.Error(),
	}, in.now.UTC())
	return report{status: &st, events: d.events, state: d.state}
}

// newStatus returns a copy of the last status, or a new one.
func newStatus(in planInput) api.ReplicationControllerStatus {
	if last := in.state.status; last != nil {
		st := *last
		st.Conditions = append([]api.Condition(nil), last.Conditions...)
		return st
	}
	return api.ReplicationControllerStatus{ID: in.id, CreationTimestamp: in.now.UTC()}
}
