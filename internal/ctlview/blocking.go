package ctlview

// This file is why a controller waits, as its status says: what rcctl's
// --wait and rollout status print as soon as the status has it, and when
// they stop waiting because nothing will change on its own.

import "github.com/replication-manager/replication-manager/api"

// Blocked returns the Progressing condition of a controller that cannot
// progress without a change (False, reason Blocked: a slot fits no node),
// or nil. A crash loop or a failed create is not blocked: both may pass.
func Blocked(st *api.ReplicationControllerStatus) *api.Condition {
	if st == nil {
		return nil
	}
	if c := st.FindCondition(api.ConditionProgressing); c != nil && c.Status == "False" && c.Reason == api.ReasonBlocked {
		return c
	}
	return nil
}

// Troubles are the conditions of st that keep replicas from being ready,
// as "Reason: message": a failure (slots that fit no node, a failed
// create or delete) and a crash loop, in that order; none when all is
// well.
func Troubles(st *api.ReplicationControllerStatus) []string {
	if st == nil {
		return nil
	}
	var out []string
	for _, t := range []string{api.ConditionReplicaFailure, api.ConditionCrashLoop} {
		if c := st.FindCondition(t); c != nil && c.Status != "False" {
			out = append(out, withReason(c.Reason, c.Message))
		}
	}
	return out
}
