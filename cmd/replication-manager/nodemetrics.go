package main

// This file exports the leader's view of the nodes as metrics, one series
// per node and figure: whether it is up, its availability, the slots
// assigned to it, the
// containers it reports, and its capacity and what its slots reserve of
// it. A standby exports none.

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/leader"
)

var (
	nodeUpDesc = prometheus.NewDesc("replication_manager_node_up",
		"1 while the node is registered (its lease lives), 0 while it is gone but still holds assignments; from the leader.", []string{"node"}, nil)
	nodeAssignedDesc = prometheus.NewDesc("replication_manager_node_assigned_slots",
		"Slots assigned to the node; from the leader.", []string{"node"}, nil)
	nodeContainersDesc = prometheus.NewDesc("replication_manager_node_containers",
		"Active containers the node reports; from the leader.", []string{"node"}, nil)
	nodeAvailabilityDesc = prometheus.NewDesc("replication_manager_node_availability",
		"1 for the node's availability (active, pause or drain, from /registry/nodeconfig), 0 for the two others; from the leader.", []string{"node", "availability"}, nil)
)

// nodeAvailabilities are the values of the availability label.
var nodeAvailabilities = []api.NodeAvailability{api.NodeActive, api.NodePause, api.NodeDrain}

// nodeCollector collects the node metrics of the scheduler of the term in
// progress, if this manager leads.
type nodeCollector struct {
	// current returns the leader of the term in progress, nil if none.
	current func() *leader.ReplicationManager
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodeUpDesc
	ch <- nodeAssignedDesc
	ch <- nodeContainersDesc
	ch <- nodeAvailabilityDesc
	ch <- nodeCapacityMemoryDesc
	ch <- nodeReservedMemoryDesc
	ch <- nodeCapacityCPUDesc
	ch <- nodeReservedCPUDesc
	ch <- nodeHostMemoryDesc
	ch <- nodeHostCPUDesc
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	if c.current == nil {
		return
	}
	s := c.current()
	if s == nil {
		return
	}
	for _, n := range s.NodeStats() {
		up := 0.0
		if n.Alive {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(nodeUpDesc, prometheus.GaugeValue, up, n.Name)
		ch <- prometheus.MustNewConstMetric(nodeAssignedDesc, prometheus.GaugeValue, float64(n.Assigned), n.Name)
		ch <- prometheus.MustNewConstMetric(nodeContainersDesc, prometheus.GaugeValue, float64(n.Containers), n.Name)
		for _, a := range nodeAvailabilities {
			v := 0.0
			if (api.NodeConfig{Availability: n.Availability}).Effective() == a {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(nodeAvailabilityDesc, prometheus.GaugeValue, v, n.Name, string(a))
		}
		ch <- prometheus.MustNewConstMetric(nodeCapacityMemoryDesc, prometheus.GaugeValue, float64(n.CapacityMemory), n.Name)
		ch <- prometheus.MustNewConstMetric(nodeReservedMemoryDesc, prometheus.GaugeValue, float64(n.ReservedMemory), n.Name)
		ch <- prometheus.MustNewConstMetric(nodeCapacityCPUDesc, prometheus.GaugeValue, n.CapacityCPU, n.Name)
		ch <- prometheus.MustNewConstMetric(nodeReservedCPUDesc, prometheus.GaugeValue, n.ReservedCPU, n.Name)
		ch <- prometheus.MustNewConstMetric(nodeHostMemoryDesc, prometheus.GaugeValue, float64(n.HostMemory), n.Name)
		ch <- prometheus.MustNewConstMetric(nodeHostCPUDesc, prometheus.GaugeValue, n.HostCPU, n.Name)
	}
}
