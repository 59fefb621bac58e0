package ctlview

// This file is a controller's STATUS in one word, as `kubectl get pods`
// shows CrashLoopBackOff: the first thing wrong that the conditions say,
// else whether it is paused, still on its way, or running as asked. The
// list views (rcctl get, the status page) show it; the conditions
// themselves are in describe.

import (
	"strings"

	"github.com/replication-manager/replication-manager/api"
)

// The words of Status besides the condition reasons it passes on.
const (
	// StatusPending: the manager has not reported on the controller yet.
	StatusPending = "Pending"
	// StatusInvalidSpec: the spec does not decode or is refused.
	StatusInvalidSpec = "InvalidSpec"
	// StatusCrashLoop: a container keeps exiting (CrashLoop True).
	StatusCrashLoop = "CrashLoop"
	// StatusImageNotFound: a create failed because the node has no such
	// image (ReplicaFailure CreateFailed, api.ErrImageNotFound).
	StatusImageNotFound = "ImageNotFound"
	// StatusPaused: desiredState.paused holds the rollout.
	StatusPaused = "Paused"
	// StatusProgressing: the containers are not yet all of the current
	// template and available in the number asked for (a rollout, a scale,
	// a replacement).
	StatusProgressing = "Progressing"
	// StatusRunning: every replica asked for is of the current template
	// and available.
	StatusRunning = "Running"
	// StatusScaledToZero: the spec asks for no replicas and none is left.
	StatusScaledToZero = "ScaledToZero"
)

// Status is the controller's state in one word. rc is the spec (nil when
// it does not decode, with specErr saying why), st the manager's last
// status. In order, the first that holds:
//
//   - InvalidSpec: the spec does not decode, or InvalidSpec is True;
//   - Pending: no status yet;
//   - RolledBack or RollbackFailed: the leader rolled the spec's template
//     back (a crash loop of the failed template is why, not news);
//   - CrashLoop: CrashLoop is True;
//   - the ReplicaFailure's reason when it is True (CreateFailed,
//     Unschedulable, SlotConflict, DeleteFailed), ImageNotFound for a
//     create that failed for want of the image;
//   - the reason of a Progressing that is False (Blocked,
//     ProgressDeadlineExceeded);
//   - Paused: desiredState.paused;
//   - Progressing: containers of an older template remain, or fewer than
//     asked are available, or more run than asked;
//   - ScaledToZero, or Running.
func Status(rc *api.ReplicationController, st *api.ReplicationControllerStatus, specErr error) string {
	if specErr != nil || rc == nil {
		return StatusInvalidSpec
	}
	if st == nil {
		return StatusPending
	}
	if c := st.FindCondition(api.ConditionInvalidSpec); c != nil && c.Status == "True" {
		return StatusInvalidSpec
	}
	if c := st.FindCondition(api.ConditionProgressing); c != nil && c.Status == "False" &&
		(c.Reason == api.ReasonRolledBack || c.Reason == api.ReasonRollbackFailed) {
		return c.Reason
	}
	if c := st.FindCondition(api.ConditionCrashLoop); c != nil && c.Status == "True" {
		return StatusCrashLoop
	}
	if c := st.FindCondition(api.ConditionReplicaFailure); c != nil && c.Status == "True" {
		return failureStatus(*c)
	}
	if c := st.FindCondition(api.ConditionProgressing); c != nil && c.Status == "False" {
		return orWord(c.Reason, api.ConditionProgressing+"=False")
	}
	desired := rc.DesiredState.Replicas
	switch {
	case rc.DesiredState.Paused:
		return StatusPaused
	case st.Replicas > st.UpdatedReplicas || st.AvailableReplicas < desired || st.Replicas != desired:
		return StatusProgressing
	case desired == 0:
		return StatusScaledToZero
	}
	return StatusRunning
}

// failureStatus is the word of a ReplicaFailure that is True: its reason,
// or what the message says failed when the reason is a create's.
func failureStatus(c api.Condition) string {
	if c.Reason == api.ReasonCreateFailed && strings.Contains(c.Message, api.ErrImageNotFound.Error()) {
		return StatusImageNotFound
	}
	return orWord(c.Reason, api.ConditionReplicaFailure)
}

func orWord(reason, fallback string) string {
	if reason == "" {
		return fallback
	}
	return reason
}
