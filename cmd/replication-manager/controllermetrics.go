package main

// This file exports the leader's statuses as metrics, one series per
// controller and figure, as kube-state-metrics exports a Deployment's:
// enough to alert on a controller that has fewer ready replicas than it
// wants, or a rollout that stalled (docs/ALERTS.md). A standby exports
// none; alert on max by (controller) over the managers.

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/replication-manager/replication-manager/registry/leader"
)

var (
	controllerDesiredDesc = prometheus.NewDesc("replication_manager_controller_replicas_desired",
		"Replicas the controller's spec asks for; from the leader.", []string{"controller"}, nil)
	controllerReplicasDesc = prometheus.NewDesc("replication_manager_controller_replicas",
		"Live replicas of the controller over every node (status replicas); from the leader.", []string{"controller"}, nil)
	controllerReadyDesc = prometheus.NewDesc("replication_manager_controller_replicas_ready",
		"Ready replicas of the controller (status readyReplicas); from the leader.", []string{"controller"}, nil)
	controllerAvailableDesc = prometheus.NewDesc("replication_manager_controller_replicas_available",
		"Available replicas of the controller (status availableReplicas); from the leader.", []string{"controller"}, nil)
	controllerUpdatedDesc = prometheus.NewDesc("replication_manager_controller_replicas_updated",
		"Replicas of the controller that run its current template (status updatedReplicas); from the leader.", []string{"controller"}, nil)
	controllerConditionDesc = prometheus.NewDesc("replication_manager_controller_condition",
		"1 for the status (true, false, unknown) a condition of the controller has, 0 for the others; from the leader.",
		[]string{"controller", "condition", "status"}, nil)
	nodeCapacityMemoryDesc = prometheus.NewDesc("replication_manager_node_capacity_memory_bytes",
		"Memory the node registered; from the leader.", []string{"node"}, nil)
	nodeReservedMemoryDesc = prometheus.NewDesc("replication_manager_node_reserved_memory_bytes",
		"Memory the slots assigned to the node reserve; from the leader.", []string{"node"}, nil)
	nodeCapacityCPUDesc = prometheus.NewDesc("replication_manager_node_capacity_cpu_cores",
		"CPUs the node registered; from the leader.", []string{"node"}, nil)
	nodeReservedCPUDesc = prometheus.NewDesc("replication_manager_node_reserved_cpu_cores",
		"CPU the slots assigned to the node reserve, in cores (1024 shares each); from the leader.", []string{"node"}, nil)
	nodeHostMemoryDesc = prometheus.NewDesc("replication_manager_node_host_reserved_memory_bytes",
		"Memory the node's host keeps for itself (--node-reserve); from the leader.", []string{"node"}, nil)
	nodeHostCPUDesc = prometheus.NewDesc("replication_manager_node_host_reserved_cpu_cores",
		"CPU the node's host keeps for itself (--node-reserve), in cores; from the leader.", []string{"node"}, nil)
)

// conditionStatuses are the values a condition's status series take.
var conditionStatuses = []string{"true", "false", "unknown"}

// controllerCollector collects the controller metrics of the scheduler
// of the term in progress, if this manager leads.
type controllerCollector struct {
	// current returns the leader of the term in progress, nil if none.
	current func() *leader.ReplicationManager
}

func (c *controllerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{controllerDesiredDesc, controllerReplicasDesc, controllerReadyDesc,
		controllerAvailableDesc, controllerUpdatedDesc, controllerConditionDesc} {
		ch <- d
	}
}

func (c *controllerCollector) Collect(ch chan<- prometheus.Metric) {
	if c.current == nil {
		return
	}
	if s := c.current(); s != nil {
		collectControllers(s.ControllerStats(), ch)
	}
}

// collectControllers sends the series of stats.
func collectControllers(stats []leader.ControllerStat, ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	for _, st := range stats {
		gauge(controllerDesiredDesc, st.Desired, st.ID)
		if st.Status == nil {
			continue // not written yet: no figures to tell
		}
		gauge(controllerReplicasDesc, st.Status.Replicas, st.ID)
		gauge(controllerReadyDesc, st.Status.ReadyReplicas, st.ID)
		gauge(controllerAvailableDesc, st.Status.AvailableReplicas, st.ID)
		gauge(controllerUpdatedDesc, st.Status.UpdatedReplicas, st.ID)
		for _, cond := range st.Status.Conditions {
			status := strings.ToLower(cond.Status)
			if status != "true" && status != "false" {
				status = "unknown"
			}
			for _, value := range conditionStatuses {
				v := 0
				if value == status {
					v = 1
				}
				gauge(controllerConditionDesc, v, st.ID, cond.Type, value)
			}
		}
	}
}
