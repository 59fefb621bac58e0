package leader

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// TestProgressingReasonFitsTheCause: a slot that fits no node blocks the
// controller and says which and why; a crash loop or a failed create does
// not (they may recover on their own); a scale is Scaling, a template
// change RollingUpdate until it completes.
func TestProgressingReasonFitsTheCause(t *testing.T) {
	spec := demospec.Controller("web", "demo-task:latest", 5, nil)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cpu := &unschedulable{slots: []int{5}, reason: "no node has room (a: cpu: needs 512 shares (a reservation: 1024 = one CPU), 0 free of 2048)"}
	rollingLast := &api.ReplicationControllerStatus{ID: "web", Conditions: []api.Condition{
		{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate}}}
	crash := api.Condition{Type: api.ConditionCrashLoop, Status: "True", Reason: "CrashLoop", Message: "web-2 exited with code 1"}
	createFailed := api.Condition{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed, Message: "create web-3: no such image"}
	tests := []struct {
		name          string
		reports       []*api.NodeReport
		unschedulable *unschedulable
		rolling       bool
		last          *api.ReplicationControllerStatus
		status        string
		reason        string
		message       string
	}{
		{name: "a slot that fits no node blocks a scale",
			reports: []*api.NodeReport{share("a", 4, 4, 4, 4, 30)}, unschedulable: cpu,
			status: "False", reason: api.ReasonBlocked,
			message: "slot web-5 fits no node: no node has room (a: cpu: needs 512 shares (a reservation: 1024 = one CPU), 0 free of 2048); 4 of 5 updated, 4 available"},
		{name: "slots that fit no node block a rollout, each named",
			reports: []*api.NodeReport{share("a", 3, 3, 3, 1, 30)}, rolling: true,
			unschedulable: &unschedulable{slots: []int{4, 5}, reason: "no node matches nodeSelector zone=c (1 node(s) registered)"},
			status:        "False", reason: api.ReasonBlocked,
			message: "slots web-4, web-5 fit no node: no node matches nodeSelector zone=c (1 node(s) registered); 1 of 5 updated, 3 available"},
		{name: "no node registered yet is not blocked: one comes as the managers start",
			unschedulable: &unschedulable{slots: []int{1, 2, 3, 4, 5}, reason: "no node is registered", noNode: true},
			status:        "True", reason: api.ReasonScaling},
		{name: "a crash loop is not blocked",
			reports: []*api.NodeReport{share("a", 5, 4, 4, 5, 30, crash)},
			status:  "True", reason: api.ReasonScaling},
		{name: "a failed create is not blocked",
			reports: []*api.NodeReport{share("a", 4, 4, 4, 4, 30, createFailed)},
			status:  "True", reason: api.ReasonScaling},
		{name: "a create is a scale",
			status: "True", reason: api.ReasonScaling, message: "0 of 5 updated, 0 available"},
		{name: "a scale is no rolling update",
			reports: []*api.NodeReport{share("a", 3, 3, 3, 3, 30)},
			status:  "True", reason: api.ReasonScaling, message: "3 of 5 updated, 3 available"},
		{name: "a template change rolls",
			reports: []*api.NodeReport{share("a", 5, 5, 5, 0, 30)}, rolling: true,
			status: "True", reason: api.ReasonRollingUpdate},
		{name: "old containers left are a rolling update",
			reports: []*api.NodeReport{share("a", 5, 5, 5, 3, 30)},
			status:  "True", reason: api.ReasonRollingUpdate},
		{name: "a rollout stays one until its last containers are available",
			reports: []*api.NodeReport{share("a", 5, 5, 4, 5, 30)}, last: rollingLast,
			status: "True", reason: api.ReasonRollingUpdate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mergeStatus(mergeInput{id: "web", spec: spec, revision: 30, now: now, reports: tt.reports,
				unschedulable: tt.unschedulable, rolling: tt.rolling, last: tt.last})
			c := st.FindCondition(api.ConditionProgressing)
			if c == nil || c.Status != tt.status || c.Reason != tt.reason || tt.message != "" && c.Message != tt.message {
				t.Errorf("Progressing %+v,\nwant %s %s %q", c, tt.status, tt.reason, tt.message)
			}
		})
	}
}
