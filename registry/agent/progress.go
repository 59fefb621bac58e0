package agent

// This file is the node's share of a rollout's status: how many of its
// containers run the current template, and whether that share moved
// lately, so that its report says when a rollout has stalled. The steps
// themselves are the leader's (package decide).

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
	// updatedAvailable and outdated are the most of the first and the
	// fewest of the second the rollout reached: more, or fewer, is
	// progress. A container that comes back (a crash loop whose
	// container is ready for a moment each time) is not.
	updatedAvailable, outdated int
	// done is set once the rollout completed.
	done bool
	// replacing says outdated containers ran when the rollout began: a
	// rollout proper, not a controller's first containers.
	replacing bool
}

// available reports whether t has been ready for minReady at now. With
// minReady 0 ready is enough, also for a container the sync created: it
// started after the sync's now.
func available(t api.Task, minReady time.Duration, now time.Time) bool {
	return t.Ready() && (minReady <= 0 || now.Sub(startedAt(t)) >= minReady)
}

// startedAt is when t started, or when it was created where the engine
// did not say.
func startedAt(t api.Task) time.Time {
	if t.StartedAt.IsZero() {
		return t.Created
	}
	return t.StartedAt
}

// progressing returns the Progressing condition of a controller whose
// active containers are active, and the rollout record after it. A rollout
// moves when more containers of the current template are available, or
// fewer outdated ones run, than ever before in it; one that has not moved
// for the progress deadline is reported failed.
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
	r.updatedAvailable, r.outdated = max(r.updatedAvailable, updatedAvailable), min(r.outdated, outdated)
	desired := in.assigned.Len()
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
