package leader

// This file is how the leader makes one status of a controller out of the
// reports of every node that runs part of it (docs/CONTRACT.md, Nodes). It is
// pure: counts are summed, a node's failure is named with its node, the
// slots no node can take are reported as Unschedulable (and block the
// controller: blocked.go), the rollout's Progressing condition is
// decided over all nodes, and so are the images the containers run
// (images.go).

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// unschedulable is why some slots of a controller have no node.
type unschedulable struct {
	slots  []int
	reason string
	// noNode: no node is registered at all, as for a moment while the
	// managers start; the slots wait for one, and block nothing yet.
	noNode bool
}

// mergeInput is what one controller's status is made from.
type mergeInput struct {
	id string
	// spec is the valid spec; nil when it is invalid (invalid says why)
	// or gone.
	spec        *api.ReplicationController
	invalid     error
	undecodable bool
	revision    int64
	// reports are the nodes' reports, in node order.
	reports []*api.NodeReport
	// unschedulable are the slots no node can take; nil for none.
	unschedulable *unschedulable
	// rolling: some slot or container has an older template than the
	// spec's (a rolling update, not a scale).
	rolling bool
	// unhealthy are the slots reported unhealthy, of a controller that
	// replaces them.
	unhealthy []int
	// hash is the spec's template hash, rollout the leader's record of
	// the rollouts, and restored how many live containers run the
	// template a rollback restores (rollback.go).
	hash     string
	rollout  *api.RolloutRecord
	restored int
	last     *api.ReplicationControllerStatus
	now      time.Time
	// images are the nodes' containers grouped by template and image
	// ID, in node order (images.go).
	images []imageGroup
}

// mergeStatus returns the controller's status over all nodes.
func mergeStatus(in mergeInput) api.ReplicationControllerStatus {
	now := in.now.UTC()
	st := api.ReplicationControllerStatus{ID: in.id, CreationTimestamp: now}
	var conds []api.Condition
	if in.last != nil {
		st.CreationTimestamp = in.last.CreationTimestamp
		conds = in.last.Conditions
		st.Rollout = in.last.Rollout // an invalid spec keeps it as it was
	}
	st.ObservedRevision = in.revision
	st.Images = runningImages(in.images)
	for _, r := range in.reports {
		s := r.Status
		st.Replicas += s.Replicas
		st.ReadyReplicas += s.ReadyReplicas
		st.AvailableReplicas += s.AvailableReplicas
		st.UpdatedReplicas += s.UpdatedReplicas
	}
	if in.invalid != nil {
		// nothing happens to the containers: the counts are the nodes'
		// last, and the other conditions stay as they were
		reason := api.ReasonInvalidSpec
		if in.undecodable {
			reason = api.ReasonUndecodable
		}
		st.Conditions = api.SetCondition(conds, api.Condition{Type: api.ConditionInvalidSpec, Reason: reason, Message: in.invalid.Error()}, now)
		return st
	}
	conds = api.ClearCondition(conds, api.ConditionInvalidSpec)
	st.Rollout = in.rollout

	var failures, crashes []string
	failureReason, crashReason := "", ""
	progressFailed := false
	for _, r := range in.reports {
		s := r.Status
		// the status reflects the spec once every node has acted on it
		st.ObservedRevision = min(st.ObservedRevision, s.ObservedRevision)
		if c := s.FindCondition(api.ConditionReplicaFailure); c != nil {
			failures = append(failures, fmt.Sprintf("node %s: %s", r.Node, c.Message))
			failureReason = cmp.Or(failureReason, c.Reason)
		}
		if c := s.FindCondition(api.ConditionCrashLoop); c != nil {
			crashes = append(crashes, fmt.Sprintf("node %s: %s", r.Node, c.Message))
			crashReason = cmp.Or(crashReason, c.Reason)
		}
		if c := s.FindCondition(api.ConditionProgressing); c != nil && c.Reason == api.ReasonProgressDeadlineExceeded {
			progressFailed = true
		}
	}
	if u := in.unschedulable; u != nil && len(u.slots) > 0 {
		// first: it is the leader's own finding, and the likeliest cause
		failures = append([]string{fmt.Sprintf("slot(s) %s fit no node: %s", joinInts(u.slots), u.reason)}, failures...)
		failureReason = api.ReasonUnschedulable
	}
	if len(failures) > 0 {
		conds = api.SetCondition(conds, api.Condition{Type: api.ConditionReplicaFailure, Reason: failureReason, Message: strings.Join(failures, "; ")}, now)
	} else {
		conds = api.ClearCondition(conds, api.ConditionReplicaFailure)
	}
	if len(crashes) > 0 {
		conds = api.SetCondition(conds, api.Condition{Type: api.ConditionCrashLoop, Reason: crashReason, Message: strings.Join(crashes, "; ")}, now)
	} else {
		conds = api.ClearCondition(conds, api.ConditionCrashLoop)
	}
	if len(in.unhealthy) > 0 {
		conds = api.SetCondition(conds, api.Condition{Type: api.ConditionUnhealthy, Reason: api.ReasonReplacing,
			Message: fmt.Sprintf("slot(s) %s unhealthy: replaced one at a time within maxUnavailable, each again after a backoff", joinInts(in.unhealthy))}, now)
	} else {
		conds = api.ClearCondition(conds, api.ConditionUnhealthy)
	}
	if in.spec != nil {
		conds = api.SetCondition(conds, mergedProgress(in, st, progressFailed), now)
	}
	if drift := imageDrift(in.images); drift != "" {
		conds = api.SetCondition(conds, api.Condition{Type: api.ConditionImageDrift, Reason: api.ReasonImageIDsDiffer, Message: drift}, now)
	} else {
		conds = api.ClearCondition(conds, api.ConditionImageDrift)
	}
	st.Conditions = conds
	return st
}

// mergedProgress is the Progressing condition over all nodes: blocked
// when slots fit no node (blocked.go), failed when a node's rollout passed
// its deadline, complete when every replica runs the current template and
// is available, rolling while a template change rolls out, scaling
// otherwise (a create or a scale).
func mergedProgress(in mergeInput, st api.ReplicationControllerStatus, failed bool) api.Condition {
	ds := &in.spec.DesiredState
	message := fmt.Sprintf("%d of %d updated, %d available", st.UpdatedReplicas, ds.Replicas, st.AvailableReplicas)
	if c, ok := blockedProgress(in.id, in.unschedulable, message); ok {
		return c
	}
	if in.rollout.RollingBack(in.hash) {
		return rollbackProgress(in)
	}
	switch {
	case failed:
		return api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonProgressDeadlineExceeded,
			Message: message + "; a node's rollout made no progress within its deadline"}
	case st.UpdatedReplicas == ds.Replicas && st.Replicas == ds.Replicas && st.AvailableReplicas >= ds.Replicas:
		return api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRolloutComplete, Message: message}
	case ds.Strategy().Type == api.OnDelete:
		message += "; OnDelete: outdated containers are replaced only when they go"
	case ds.Paused:
		message += "; paused"
	}
	reason := api.ReasonScaling
	if in.rolling || st.UpdatedReplicas < st.Replicas || wasRolling(in.last) {
		reason = api.ReasonRollingUpdate
	}
	return api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: reason, Message: message}
}

// wasRolling reports whether the last status shows a rolling update under
// way: it stays one until it completes, although its last containers,
// all of the new template, are not yet available.
func wasRolling(last *api.ReplicationControllerStatus) bool {
	if last == nil {
		return false
	}
	c := last.FindCondition(api.ConditionProgressing)
	return c != nil && c.Status == "True" && c.Reason == api.ReasonRollingUpdate
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
