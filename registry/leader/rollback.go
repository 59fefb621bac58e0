package leader

// This file is the leader's side of the automatic rollback
// (decide/rollback.go decides it): what the decision learns from the
// reports (a node's rollout past its progress deadline), the events and
// log lines of a rollback, and how the status tells it: the rollout
// record, and Progressing False with reason RolledBack (or
// RollbackFailed), naming the failed revision and the restored one.

import (
	"fmt"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// deadlineExceeded reports whether a node that has acted on the spec of
// ModRevision rev reports its rollout past the progress deadline.
func deadlineExceeded(reports []*api.NodeReport, rev int64) bool {
	for _, r := range reports {
		c := r.Status.FindCondition(api.ConditionProgressing)
		if c != nil && c.Reason == api.ReasonProgressDeadlineExceeded && r.Status.ObservedRevision >= rev {
			return true
		}
	}
	return false
}

// recordRollback logs and records as an event what res did of a
// rollback.
func (s *ReplicationManager) recordRollback(id string, res decide.Result) {
	if res.Rollback == "" {
		return
	}
	rec := res.Rollout
	failed, restored := revisionName(rec.FailedNumber, rec.FailedRevision), revisionName(rec.CompletedNumber, rec.CompletedRevision)
	ev := api.Event{Controller: id, Type: api.EventWarning, Reason: api.ReasonRolledBack}
	switch res.Rollback {
	case decide.RollbackStarted:
		ev.Message = fmt.Sprintf("rollout of %s failed (%s): rolling every slot back to %s; the spec is left as written", failed, rec.Reason, restored)
	case decide.RollbackDone:
		ev.Type, ev.Message = api.EventNormal, fmt.Sprintf("rolled back from %s to %s: every replica runs it", failed, restored)
	case decide.RollbackFailed:
		ev.Reason = api.ReasonRollbackFailed
		ev.Message = fmt.Sprintf("rollback from %s to %s failed: held where it is, never rolled back again", failed, restored)
	}
	s.logger.Warn("rollback", "controller", id, "step", string(res.Rollback), "message", ev.Message)
	s.recordEvent(ev)
}

// revisionName names a template for people: its history number, or the
// etcd revision when it has none.
func revisionName(number, rev int64) string {
	if number > 0 {
		return fmt.Sprintf("revision %d", number)
	}
	return fmt.Sprintf("etcd revision %d", rev)
}

// statusRollout is the record as the status carries it: nil when there
// is nothing in it, and its time without a monotonic reading, so that the
// status compares equal to itself once read back.
func statusRollout(rec api.RolloutRecord) *api.RolloutRecord {
	if rec == (api.RolloutRecord{}) {
		return nil
	}
	if !rec.RollbackSince.IsZero() {
		rec.RollbackSince = rec.RollbackSince.UTC()
	}
	return &rec
}

// restoredCount counts the live containers of the template a rollback
// restores.
func restoredCount(in decide.Input, rec api.RolloutRecord) int {
	n := 0
	for _, c := range in.Containers {
		if c.Live && c.Hash == rec.CompletedHash {
			n++
		}
	}
	return n
}

// rollbackProgress is the Progressing condition of a controller whose
// spec names a template the leader rolled back from.
func rollbackProgress(in mergeInput) api.Condition {
	rec := in.rollout
	failed, restored := revisionName(rec.FailedNumber, rec.FailedRevision), revisionName(rec.CompletedNumber, rec.CompletedRevision)
	replicas := in.spec.DesiredState.Replicas
	c := api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonRolledBack}
	switch {
	case rec.RollbackFailed:
		c.Reason = api.ReasonRollbackFailed
		c.Message = fmt.Sprintf("rollout of %s failed (%s); the rollback to %s failed in turn: held where it is, %d of %d replicas on %s",
			failed, rec.Reason, restored, in.restored, replicas, restored)
	case rec.RolledBack:
		c.Message = fmt.Sprintf("rollout of %s failed (%s); rolled back to %s, which every replica runs. The spec still names %s: apply a new template, or rcctl rollout undo to make the spec agree",
			failed, rec.Reason, restored, failed)
	default:
		c.Message = fmt.Sprintf("rollout of %s failed (%s); rolling back to %s: %d of %d replicas on it", failed, rec.Reason, restored, in.restored, replicas)
	}
	return c
}

// dryRunRestores says what a rollback of the template hash restores, for
// a dry run; "" when rec does not roll it back.
func dryRunRestores(rec api.RolloutRecord, hash string) string {
	if !rec.RollingBack(hash) {
		return ""
	}
	failed, restored := revisionName(rec.FailedNumber, rec.FailedRevision), revisionName(rec.CompletedNumber, rec.CompletedRevision)
	switch {
	case rec.RollbackFailed:
		return fmt.Sprintf("the rollback from %s to %s failed: held where it is", failed, restored)
	case rec.RolledBack:
		return fmt.Sprintf("rolled back from %s to %s (template %s); the spec's template is not rolled forward", failed, restored, rec.CompletedHash)
	}
	return fmt.Sprintf("rolling back from %s to %s (template %s): the steps restore it, and the spec's template is not rolled forward", failed, restored, rec.CompletedHash)
}
