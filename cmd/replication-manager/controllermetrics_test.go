package main

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// statsCollector collects fixed stats, as the leader's collector does
// from its scheduler's.
type statsCollector []leader.ControllerStat

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) { (&controllerCollector{}).Describe(ch) }
func (c statsCollector) Collect(ch chan<- prometheus.Metric) { collectControllers(c, ch) }

func TestControllerMetricsSayWhatEachControllerWantsAndHas(t *testing.T) {
	stats := statsCollector{
		{ID: "new", Desired: 2}, // no status written yet
		{ID: "web", Desired: 5, Status: &api.ReplicationControllerStatus{
			Replicas: 4, ReadyReplicas: 3, AvailableReplicas: 2, UpdatedReplicas: 1,
			Conditions: []api.Condition{{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate}},
		}},
	}
	want := `
# HELP replication_manager_controller_condition 1 for the status (true, false, unknown) a condition of the controller has, 0 for the others; from the leader.
# TYPE replication_manager_controller_condition gauge
replication_manager_controller_condition{condition="Progressing",controller="web",status="false"} 0
replication_manager_controller_condition{condition="Progressing",controller="web",status="true"} 1
replication_manager_controller_condition{condition="Progressing",controller="web",status="unknown"} 0
# HELP replication_manager_controller_replicas_desired Replicas the controller's spec asks for; from the leader.
# TYPE replication_manager_controller_replicas_desired gauge
replication_manager_controller_replicas_desired{controller="new"} 2
replication_manager_controller_replicas_desired{controller="web"} 5
# HELP replication_manager_controller_replicas_ready Ready replicas of the controller (status readyReplicas); from the leader.
# TYPE replication_manager_controller_replicas_ready gauge
replication_manager_controller_replicas_ready{controller="web"} 3
`
	err := testutil.CollectAndCompare(stats, strings.NewReader(want),
		"replication_manager_controller_condition", "replication_manager_controller_replicas_desired", "replication_manager_controller_replicas_ready")
	if err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(stats); n != 1+4+3+1 {
		t.Errorf("%d series, want 9: desired for both, four figures and three condition series for web", n)
	}
}
