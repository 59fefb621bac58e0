package bench

import (
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestRolloutOutcome(t *testing.T) {
	progressing := func(status, reason string) []api.Condition {
		return []api.Condition{{Type: api.ConditionProgressing, Status: status, Reason: reason}}
	}
	tests := []struct {
		name    string
		st      api.ReplicationControllerStatus
		ends    bool
		wantErr string
	}{
		{"complete", api.ReplicationControllerStatus{Replicas: 10, UpdatedReplicas: 10, Conditions: progressing("True", api.ReasonRolloutComplete)}, true, ""},
		{"still rolling", api.ReplicationControllerStatus{Replicas: 10, UpdatedReplicas: 9, Conditions: progressing("True", api.ReasonRollingUpdate)}, false, ""},
		{"complete by reason, but not all updated", api.ReplicationControllerStatus{Replicas: 10, UpdatedReplicas: 9, Conditions: progressing("True", api.ReasonRolloutComplete)}, false, ""},
		{"an old container still counted", api.ReplicationControllerStatus{Replicas: 11, UpdatedReplicas: 10, Conditions: progressing("True", api.ReasonRolloutComplete)}, false, ""},
		{"no condition yet", api.ReplicationControllerStatus{Replicas: 10}, false, ""},
		{"stalled", api.ReplicationControllerStatus{Replicas: 10, UpdatedReplicas: 1, Conditions: progressing("False", api.ReasonProgressDeadlineExceeded)}, true, "rollout failed"},
		{"refused", api.ReplicationControllerStatus{Conditions: []api.Condition{{Type: api.ConditionInvalidSpec, Status: "True", Message: "bad"}}}, true, "spec refused: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen, ends := rolloutOutcome(&tt.st, 10)
			if ends != tt.ends {
				t.Fatalf("ends = %v, want %v", ends, tt.ends)
			}
			switch {
			case tt.wantErr == "" && seen.err != nil:
				t.Errorf("error %v, want none", seen.err)
			case tt.wantErr != "" && (seen.err == nil || !strings.Contains(seen.err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one with %q", seen.err, tt.wantErr)
			}
		})
	}
}

func TestCallsSinceAndAddCalls(t *testing.T) {
	d := callsSince(map[string]float64{"create": 10, "list": 3}, map[string]float64{"create": 20, "list": 3, "rename": 10})
	if len(d) != 2 || d["create"] != 10 || d["rename"] != 10 {
		t.Errorf("callsSince = %v, want create 10, rename 10", d)
	}
	sum := addCalls(addCalls(nil, d), d)
	if sum["create"] != 20 || sum["rename"] != 20 {
		t.Errorf("addCalls twice = %v", sum)
	}
	if addCalls(nil, nil) != nil {
		t.Error("addCalls(nil, nil) allocated")
	}
}

func TestRolloutStrategiesMatchEachOther(t *testing.T) {
	for _, s := range rolloutStrategies() {
		rc := newController("x", "img", 10, nil)
		rc.DesiredState.UpdateStrategy = s.manager
		if err := api.Validate(rc, api.ValidateOptions{Key: "x", MaxReplicas: 1000}); err != nil {
			t.Fatalf("%s: the manager's spec is refused: %v", s.name, err)
		}
		surge, unavailable := rc.DesiredState.Strategy().Bounds(10)
		if s.swarmOrder != s.name || (s.name == "start-first") != (surge == 1 && unavailable == 0) || (s.name == "stop-first") != (surge == 0 && unavailable == 1) {
			t.Errorf("%s: manager surge %d, unavailable %d; Swarm order %s", s.name, surge, unavailable, s.swarmOrder)
		}
	}
}
