package ctlview

import (
	"errors"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestStatusSaysInOneWordWhatIsWrongFirst(t *testing.T) {
	cond := func(typ, status, reason, message string) api.Condition {
		return api.Condition{Type: typ, Status: status, Reason: reason, Message: message}
	}
	rolling := cond(api.ConditionProgressing, "True", api.ReasonRollingUpdate, "")
	complete := cond(api.ConditionProgressing, "True", api.ReasonRolloutComplete, "")
	noImage := cond(api.ConditionReplicaFailure, "True", api.ReasonCreateFailed, "create web-3: no such image: demo-task:v3")
	spec := func(replicas int, paused bool) *api.ReplicationController {
		return &api.ReplicationController{ID: "web", DesiredState: api.ReplicationControllerState{Replicas: replicas, Paused: paused}}
	}
	status := func(replicas, updated, available int, conds ...api.Condition) *api.ReplicationControllerStatus {
		return &api.ReplicationControllerStatus{Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: available, AvailableReplicas: available, Conditions: conds}
	}
	for _, tc := range []struct {
		name    string
		rc      *api.ReplicationController
		st      *api.ReplicationControllerStatus
		specErr error
		want    string
	}{
		{"all there", spec(3, false), status(3, 3, 3, complete), nil, "Running"},
		{"no status yet", spec(3, false), nil, nil, "Pending"},
		{"an undecodable spec", nil, status(1, 1, 1), errors.New("bad"), "InvalidSpec"},
		{"a refused spec", spec(3, false), status(3, 3, 3, cond(api.ConditionInvalidSpec, "True", api.ReasonInvalidSpec, "")), nil, "InvalidSpec"},
		{"a crash loop", spec(3, false), status(3, 3, 2, rolling, cond(api.ConditionCrashLoop, "True", "", "exited with code 1")), nil, "CrashLoop"},
		{"a missing image", spec(3, false), status(2, 2, 2, rolling, noImage), nil, "ImageNotFound"},
		{"another create failure", spec(3, false), status(2, 2, 2, cond(api.ConditionReplicaFailure, "True", api.ReasonCreateFailed, "create web-3: port taken")), nil, "CreateFailed"},
		{"no node takes a slot", spec(5, false), status(4, 4, 4, cond(api.ConditionReplicaFailure, "True", api.ReasonUnschedulable, "")), nil, "Unschedulable"},
		{"a blocked rollout", spec(3, false), status(3, 1, 2, cond(api.ConditionProgressing, "False", api.ReasonBlocked, "")), nil, "Blocked"},
		{"a stalled rollout", spec(3, false), status(3, 1, 2, cond(api.ConditionProgressing, "False", api.ReasonProgressDeadlineExceeded, "")), nil, "ProgressDeadlineExceeded"},
		{"a crash loop wins over a failure", spec(3, false), status(3, 3, 2, noImage, cond(api.ConditionCrashLoop, "True", "", "")), nil, "CrashLoop"},
		{"a rollback wins over the failed template's crash loop", spec(3, false), status(3, 0, 3, cond(api.ConditionCrashLoop, "True", "", ""),
			cond(api.ConditionProgressing, "False", api.ReasonRolledBack, "")), nil, "RolledBack"},
		{"a failed rollback", spec(3, false), status(3, 1, 2, cond(api.ConditionProgressing, "False", api.ReasonRollbackFailed, "")), nil, "RollbackFailed"},
		{"paused", spec(3, true), status(3, 1, 3, rolling), nil, "Paused"},
		{"a rollout", spec(3, false), status(3, 1, 3, rolling), nil, "Progressing"},
		{"a scale-up", spec(5, false), status(3, 3, 3, rolling), nil, "Progressing"},
		{"a scale-down", spec(1, false), status(3, 3, 3, rolling), nil, "Progressing"},
		{"the replacement not yet available", spec(3, false), status(3, 3, 2, rolling), nil, "Progressing"},
		{"scaled to zero", spec(0, false), status(0, 0, 0, complete), nil, "ScaledToZero"},
	} {
		if got := Status(tc.rc, tc.st, tc.specErr); got != tc.want {
			t.Errorf("%s: Status = %q, want %q", tc.name, got, tc.want)
		}
	}
}
