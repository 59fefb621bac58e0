package api

import "time"

// Condition types and reasons the manager writes.
const (
	ConditionReplicaFailure = "ReplicaFailure"
	ConditionInvalidSpec    = "InvalidSpec"
	ConditionCrashLoop      = "CrashLoop"
	// ConditionUnhealthy is True while slots of a controller whose health
	// check says onUnhealthy: replace run an unhealthy task; its message
	// names them.
	ConditionUnhealthy = "Unhealthy"
	// ReasonReplacing is ConditionUnhealthy's reason.
	ReasonReplacing = "Replacing"
	// ReasonUnhealthyReplaced is the event of a task replaced because it
	// was unhealthy.
	ReasonUnhealthyReplaced = "UnhealthyReplaced"
	// ConditionProgressing is a rollout's state: True with reason
	// ReasonRollingUpdate while it rolls (a template changed), True with
	// ReasonScaling while replicas come or go with no template change (a
	// create, a scale), True with ReasonRolloutComplete when done, False
	// with ReasonProgressDeadlineExceeded when it stalled, False with
	// ReasonBlocked while it cannot progress without a change (the message
	// names the slots and why).
	ConditionProgressing = "Progressing"
	// ConditionImageDrift is True when containers of one template run
	// different images (a tag that moved between two creates, on two
	// nodes or two slots); the message names the slots and image IDs.
	// It is absent otherwise.
	ConditionImageDrift = "ImageDrift"

	ReasonRollingUpdate            = "RollingUpdate"
	ReasonScaling                  = "Scaling"
	ReasonRolloutComplete          = "RolloutComplete"
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	ReasonBlocked                  = "Blocked"
	// ReasonRolledBack: the rollout of the spec's template failed and the
	// leader returns (or has returned) every slot to the last template
	// whose rollout completed, leaving the spec as written; the message
	// names both revisions. ReasonRollbackFailed: that rollback failed in
	// turn, and holds where it is.
	ReasonRolledBack     = "RolledBack"
	ReasonRollbackFailed = "RollbackFailed"

	ReasonCreateFailed = "CreateFailed"
	ReasonDeleteFailed = "DeleteFailed"
	// ReasonInitFailed says an init container of a task exited with a
	// code other than 0: the task waits out the crash-loop backoff and
	// tries again.
	ReasonInitFailed = "InitFailed"
	// ReasonPullFailed: the node could not pull an image of the
	// template; the message is the engine's (unauthorized, not found,
	// the registry unreachable).
	ReasonPullFailed = "PullFailed"
	// ReasonSlotConflict: a slot's name is held by a container outside the
	// controller's set (started by hand, another registry's, or left
	// outside by a selector change); the replicas use other slots.
	ReasonSlotConflict = "SlotConflict"
	ReasonInvalidSpec  = "InvalidSpec"
	ReasonUndecodable  = "Undecodable"
	// ReasonImageIDsDiffer is ImageDrift's reason: containers of one
	// template, made from the same image reference, run different image
	// IDs.
	ReasonImageIDsDiffer = "ImageIDsDiffer"
)

// ReplicationControllerStatus is what the manager writes under
// /registry/status/controllers/<id> after a sync.
type ReplicationControllerStatus struct {
	ID string `json:"id"`
	// Replicas counts the controller's active containers.
	Replicas int `json:"replicas"`
	// ReadyReplicas counts those running and, where a health check exists,
	// healthy.
	ReadyReplicas int `json:"readyReplicas"`
	// AvailableReplicas counts those ready for at least minReadySeconds.
	AvailableReplicas int `json:"availableReplicas"`
	// UpdatedReplicas counts the active containers of the current
	// template.
	UpdatedReplicas int `json:"updatedReplicas"`
	// ObservedRevision is the etcd ModRevision of the spec this status
	// reflects.
	ObservedRevision int64       `json:"observedRevision"`
	Conditions       []Condition `json:"conditions,omitempty"`
	LastSyncTime     time.Time   `json:"lastSyncTime"`
	// CreationTimestamp is when the manager first saw the controller; it
	// survives manager restarts because it is carried over from the stored
	// status.
	CreationTimestamp time.Time `json:"creationTimestamp,omitzero"`

	// Images are the images the controller's live containers run, as the
	// nodes report them: one entry per image reference and image ID, with
	// how many containers run it (docs/CONTRACT.md, Images). The leader
	// writes it; a node's own report leaves it empty.
	Images []RunningImage `json:"images,omitempty"`

	// Rollout is the leader's record of the controller's rollouts: the
	// last one that completed, the failures of the one under way and a
	// rollback. The leader keeps it here so that the next leader carries
	// it on; a node's own report leaves it empty.
	Rollout *RolloutRecord `json:"rollout,omitempty"`
}

// RolloutRecord is what the leader remembers of a controller's rollouts
// (docs/CONTRACT.md, Updates). Revisions are the etcd revisions that
// assignments name, numbers those of rcctl rollout history (0: unknown).
type RolloutRecord struct {
	// Completed names the last template whose rollout completed: every
	// replica ran it, available.
	CompletedRevision int64  `json:"completedRevision,omitempty"`
	CompletedNumber   int64  `json:"completedNumber,omitempty"`
	CompletedHash     string `json:"completedHash,omitempty"`
	// Failures counts the containers of the template TargetHash (the one
	// being rolled to) that exited, or turned unhealthy, within their
	// monitor window.
	TargetHash string `json:"targetHash,omitempty"`
	Failures   int    `json:"failures,omitempty"`
	// Failed names the template whose rollout failed and that the leader
	// rolled back from, and Reason why it failed; while the spec names
	// that template the leader runs Completed instead. RollbackSince is
	// when the rollback began.
	FailedRevision int64     `json:"failedRevision,omitempty"`
	FailedNumber   int64     `json:"failedNumber,omitempty"`
	FailedHash     string    `json:"failedHash,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	RollbackSince  time.Time `json:"rollbackSince,omitzero"`
	// RolledBack: every replica runs Completed again, available.
	// RollbackFailed: the rollback failed in turn; the leader holds the
	// slots where they are and never rolls back again.
	RolledBack     bool `json:"rolledBack,omitempty"`
	RollbackFailed bool `json:"rollbackFailed,omitempty"`
}

// RollingBack reports whether r holds the slots to the completed template
// instead of the template hash the spec names.
func (r *RolloutRecord) RollingBack(hash string) bool {
	return r != nil && r.FailedHash != "" && r.FailedHash == hash
}

// Condition is one observation about a controller, in the Kubernetes style.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// FindCondition returns the condition of the given type, or nil.
func (s *ReplicationControllerStatus) FindCondition(condType string) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == condType {
			return &s.Conditions[i]
		}
	}
	return nil
}
