package bench

import (
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
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
			ends, err := rolloutOutcome(&tt.st, 10)
			if ends != tt.ends {
				t.Fatalf("ends = %v, want %v", ends, tt.ends)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one with %q", err, tt.wantErr)
			}
		})
	}
}

func TestARolloutResultKeepsEachSystemsSamplesAndTheMeanCalls(t *testing.T) {
	var r RolloutResult
	for range 2 {
		r.add("manager", rolloutSample{done: 3, running: 2, status: 3, curve: Durations{1, 2}, calls: map[string]float64{"create": 10, "remove": 5}}, 4)
		r.add("swarm", rolloutSample{done: 5, running: 4, status: 9, curve: Durations{1, 4}}, 4)
	}
	if len(r.Manager) != 2 || r.ManagerRunning[1] != 2 || r.ManagerStatus[0] != 3 || len(r.ManagerCurves) != 2 {
		t.Errorf("the manager's samples: %+v", r)
	}
	if len(r.Swarm) != 2 || r.SwarmRunning[1] != 4 || r.SwarmCompleted[0] != 9 || len(r.SwarmCurves) != 2 {
		t.Errorf("Swarm's samples: %+v", r)
	}
	// 2 of 4 rounds so far: half a round's calls per rollout
	if r.ManagerCalls["create"] != 5 || r.ManagerCalls["remove"] != 2.5 {
		t.Errorf("calls per rollout: %v", r.ManagerCalls)
	}
}

func TestRolloutStrategiesMatchEachOther(t *testing.T) {
	for _, s := range rolloutStrategies() {
		rc := demospec.Controller("x", "img", 10, nil)
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
