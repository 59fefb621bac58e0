package ctlview

import (
	"errors"
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestGlanceTellsARolloutFromAReplacement(t *testing.T) {
	rolling := api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate}
	complete := api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRolloutComplete}
	stalled := api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonProgressDeadlineExceeded}
	failure := api.Condition{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed}
	status := func(replicas, updated, available int, conds ...api.Condition) *api.ReplicationControllerStatus {
		return &api.ReplicationControllerStatus{Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: available, AvailableReplicas: available, Conditions: conds}
	}
	for _, tc := range []struct {
		name        string
		desired     int
		st          *api.ReplicationControllerStatus
		specErr     error
		wantState   string
		wantReasons []string
	}{
		{"all there", 3, status(3, 3, 3, complete), nil, StateOK, nil},
		{"a template rolls out", 3, status(3, 1, 3, rolling), nil, StateRolling, []string{"Progressing: RollingUpdate"}},
		{"a paused rollout", 2, status(2, 0, 2, rolling), nil, StateRolling, []string{"Progressing: RollingUpdate"}},
		{"a removed container being replaced", 3, status(2, 2, 2, rolling), nil, StateDegraded, []string{"2 of 3 available"}},
		{"the replacement created, not yet available", 3, status(3, 3, 2, rolling), nil, StateDegraded, []string{"2 of 3 available"}},
		{"a stalled rollout", 3, status(3, 1, 3, stalled), nil, StateFailing, []string{"Progressing=False: ProgressDeadlineExceeded"}},
		{"failing wins over degraded", 3, status(1, 1, 1, rolling, failure), nil, StateFailing, []string{"ReplicaFailure: CreateFailed"}},
		{"no status yet", 3, nil, nil, StatePending, nil},
		{"an undecodable spec", -1, status(1, 0, 1), errors.New("bad"), StateFailing, []string{"InvalidSpec: Undecodable"}},
		{"a scale-down under way", 1, status(3, 3, 3, rolling), nil, StateOK, nil},
	} {
		state, reasons := Glance(tc.desired, tc.st, tc.specErr)
		if state != tc.wantState || !slices.Equal(reasons, tc.wantReasons) {
			t.Errorf("%s: Glance = %q %q, want %q %q", tc.name, state, reasons, tc.wantState, tc.wantReasons)
		}
	}
}

func TestAScaleIsNotRollingAndABlockedControllerFails(t *testing.T) {
	scaling := api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonScaling}
	blocked := api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonBlocked, Message: "slot web-5 fits no node: ..."}
	st := &api.ReplicationControllerStatus{Replicas: 4, UpdatedReplicas: 4, AvailableReplicas: 4, Conditions: []api.Condition{scaling}}
	if state, reasons := Glance(5, st, nil); state != StateDegraded || !slices.Equal(reasons, []string{"4 of 5 available"}) {
		t.Errorf("scaling: Glance = %q %q, want degraded, 4 of 5 available", state, reasons)
	}
	st.Conditions = []api.Condition{blocked}
	if state, reasons := Glance(5, st, nil); state != StateFailing || !slices.Equal(reasons, []string{"Progressing=False: Blocked"}) {
		t.Errorf("blocked: Glance = %q %q, want failing, Progressing=False: Blocked", state, reasons)
	}
	if c := Blocked(st); c == nil || c.Message != blocked.Message {
		t.Errorf("Blocked = %+v, want the Blocked condition", c)
	}
}

func TestTroublesAreTheFailureThenTheCrashLoop(t *testing.T) {
	st := &api.ReplicationControllerStatus{Conditions: []api.Condition{
		{Type: api.ConditionCrashLoop, Status: "True", Reason: "BackOff", Message: "web-2 exited with code 1"},
		{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonScaling},
		{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed, Message: "node a: create web-3: no such image"},
	}}
	want := []string{"CreateFailed: node a: create web-3: no such image", "BackOff: web-2 exited with code 1"}
	if got := Troubles(st); !slices.Equal(got, want) {
		t.Errorf("Troubles = %q, want %q", got, want)
	}
	if Blocked(st) != nil {
		t.Errorf("a crash loop and a failed create are not blocked")
	}
	if got := Troubles(&api.ReplicationControllerStatus{}); got != nil {
		t.Errorf("Troubles of a healthy status = %q, want none", got)
	}
}
