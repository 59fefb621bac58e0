package leader

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// share is a node's report on web: replicas, ready, available and updated
// counts at a spec revision, with extra conditions.
func share(node string, n, ready, available, updated int, rev int64, conds ...api.Condition) *api.NodeReport {
	return &api.NodeReport{Node: node, Status: api.ReplicationControllerStatus{
		ID: "web", Replicas: n, ReadyReplicas: ready, AvailableReplicas: available, UpdatedReplicas: updated,
		ObservedRevision: rev, Conditions: conds,
	}}
}

func TestMergeStatus(t *testing.T) {
	spec := demospec.Controller("web", "demo-task:latest", 4, nil)
	base := mergeInput{id: "web", spec: spec, revision: 30, now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}

	t.Run("counts are summed over the nodes", func(t *testing.T) {
		in := base
		in.rolling = true
		in.reports = []*api.NodeReport{share("a", 2, 2, 2, 2, 30), share("b", 2, 2, 1, 2, 30)}
		st := mergeStatus(in)
		if st.Replicas != 4 || st.ReadyReplicas != 4 || st.AvailableReplicas != 3 || st.UpdatedReplicas != 4 || st.ObservedRevision != 30 {
			t.Errorf("status %+v, want 4/4/3/4 at revision 30", st)
		}
		if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Reason != api.ReasonRollingUpdate {
			t.Errorf("Progressing %+v, want RollingUpdate: one replica is not available yet", c)
		}
	})
	t.Run("the spec is observed once every node has acted on it", func(t *testing.T) {
		in := base
		in.reports = []*api.NodeReport{share("a", 2, 2, 2, 2, 30), share("b", 2, 2, 2, 2, 25)}
		if st := mergeStatus(in); st.ObservedRevision != 25 {
			t.Errorf("observedRevision %d, want b's 25", st.ObservedRevision)
		}
	})
	t.Run("a node's failure is named with its node, after the slots that fit nowhere", func(t *testing.T) {
		in := base
		in.reports = []*api.NodeReport{share("a", 2, 2, 2, 2, 30,
			api.Condition{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed, Message: "create web-2: refused"})}
		in.unschedulable = &unschedulable{slots: []int{3, 4}, reason: "no node matches nodeSelector zone=c (2 node(s) registered)"}
		st := mergeStatus(in)
		c := st.FindCondition(api.ConditionReplicaFailure)
		if c == nil || c.Reason != api.ReasonUnschedulable ||
			c.Message != "slot(s) 3, 4 fit no node: no node matches nodeSelector zone=c (2 node(s) registered); node a: create web-2: refused" {
			t.Errorf("ReplicaFailure %+v", c)
		}
	})
	t.Run("a rollout past its deadline on one node fails the controller's", func(t *testing.T) {
		in := base
		in.reports = []*api.NodeReport{share("a", 2, 2, 2, 2, 30),
			share("b", 2, 1, 1, 1, 30, api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonProgressDeadlineExceeded})}
		st := mergeStatus(in)
		if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Status != "False" || c.Reason != api.ReasonProgressDeadlineExceeded {
			t.Errorf("Progressing %+v, want False, ProgressDeadlineExceeded", c)
		}
	})
	t.Run("complete when every replica runs the template and is available", func(t *testing.T) {
		in := base
		in.reports = []*api.NodeReport{share("a", 2, 2, 2, 2, 30), share("b", 2, 2, 2, 2, 30)}
		st := mergeStatus(in)
		if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Reason != api.ReasonRolloutComplete || c.Message != "4 of 4 updated, 4 available" {
			t.Errorf("Progressing %+v, want RolloutComplete, 4 of 4", c)
		}
	})
	t.Run("unhealthy slots are named, and the condition goes once they are not", func(t *testing.T) {
		in := base
		in.reports = []*api.NodeReport{share("a", 4, 2, 2, 4, 30)}
		in.unhealthy = []int{1, 3}
		st := mergeStatus(in)
		c := st.FindCondition(api.ConditionUnhealthy)
		if c == nil || c.Status != "True" || c.Reason != api.ReasonReplacing || !strings.HasPrefix(c.Message, "slot(s) 1, 3 unhealthy") {
			t.Fatalf("Unhealthy %+v, want True naming slots 1 and 3", c)
		}
		in.last, in.unhealthy = &st, nil
		if after := mergeStatus(in); after.FindCondition(api.ConditionUnhealthy) != nil {
			c := after.FindCondition(api.ConditionUnhealthy)
			t.Errorf("Unhealthy %+v with no unhealthy slot, want none", c)
		}
	})
	t.Run("an invalid spec keeps the counts and says why", func(t *testing.T) {
		in := base
		in.spec, in.invalid = nil, errors.New("desiredState.replicas: must be between 0 and 1000, got -1")
		in.reports = []*api.NodeReport{share("a", 2, 2, 2, 2, 20)}
		st := mergeStatus(in)
		c := st.FindCondition(api.ConditionInvalidSpec)
		if st.Replicas != 2 || c == nil || !strings.Contains(c.Message, "desiredState.replicas") || st.ObservedRevision != 30 {
			t.Errorf("status %+v, want 2 replicas kept, InvalidSpec naming the field, at revision 30", st)
		}
	})
}

func TestMergeStatusOfARollback(t *testing.T) {
	spec := demospec.Controller("web", "demo-task:latest", 3, nil)
	rec := &api.RolloutRecord{CompletedRevision: 10, CompletedNumber: 1, CompletedHash: "old",
		FailedRevision: 20, FailedNumber: 2, FailedHash: "new", Reason: "1 new container(s) failed"}
	in := mergeInput{id: "web", spec: spec, revision: 30, hash: "new", rollout: rec, restored: 2,
		now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		reports: []*api.NodeReport{share("a", 3, 2, 2, 0, 30,
			api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonProgressDeadlineExceeded})}}
	st := mergeStatus(in)
	c := st.FindCondition(api.ConditionProgressing)
	if c == nil || c.Status != "False" || c.Reason != api.ReasonRolledBack ||
		c.Message != "rollout of revision 2 failed (1 new container(s) failed); rolling back to revision 1: 2 of 3 replicas on it" {
		t.Errorf("Progressing %+v, want False RolledBack, rolling back from revision 2 to 1", c)
	}
	if st.Rollout != rec {
		t.Errorf("status carries rollout %+v, want the record", st.Rollout)
	}

	done := *rec
	done.RolledBack = true
	in.rollout = &done
	st2 := mergeStatus(in)
	if c := st2.FindCondition(api.ConditionProgressing); c == nil || c.Reason != api.ReasonRolledBack || !strings.Contains(c.Message, "rolled back to revision 1") {
		t.Errorf("Progressing %+v once rolled back, want RolledBack saying so", c)
	}
	failed := *rec
	failed.RollbackFailed = true
	in.rollout = &failed
	st3 := mergeStatus(in)
	if c := st3.FindCondition(api.ConditionProgressing); c == nil || c.Reason != api.ReasonRollbackFailed {
		t.Errorf("Progressing %+v after the rollback failed, want RollbackFailed", c)
	}

	// a new template in the spec: the record no longer rolls it back
	in.hash, in.rollout = "newer", rec
	st4 := mergeStatus(in)
	if c := st4.FindCondition(api.ConditionProgressing); c == nil || c.Reason == api.ReasonRolledBack {
		t.Errorf("Progressing %+v for a new template, want the rollback over", c)
	}
	// an invalid spec keeps the record it had
	in.spec, in.invalid, in.last = nil, errors.New("bad"), &st
	if got := mergeStatus(in); got.Rollout != rec {
		t.Errorf("an invalid spec's status carries rollout %+v, want the last one's", got.Rollout)
	}
}
