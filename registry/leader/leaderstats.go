package leader

// This file is what the leader tells its metrics: the nodes it knows and
// every controller's last status, as kube-state-metrics tells a
// Kubernetes cluster's.

import (
	"maps"
	"slices"

	"github.com/replication-manager/replication-manager/api"
)

// NodeStat is what the leader knows of one node, for metrics.
type NodeStat struct {
	Name string
	// Alive: the node is registered (its lease lives).
	Alive bool
	// Assigned counts the slots assigned to it; Containers the containers
	// it reports.
	Assigned, Containers int
	// Capacity is what it registered; Reserved what its assigned slots
	// reserve: memory in bytes, CPU in cores.
	CapacityMemory, ReservedMemory int64
	CapacityCPU, ReservedCPU       float64
	// HostMemory and HostCPU are what the host keeps for itself
	// (--node-reserve), in the same units.
	HostMemory int64
	HostCPU    float64
	// Availability is the node's config's: active, pause or drain; ""
	// when it says none (active).
	Availability api.NodeAvailability
}

// NodeStats returns every node the leader knows: registered, or still
// holding assignments, by name. It asks the loop, waiting for Run to
// start it; nil once it has ended.
func (s *ReplicationManager) NodeStats() []NodeStat {
	var out []NodeStat
	s.onLoop(func() { out = s.nodeStats() })
	return out
}

func (s *ReplicationManager) nodeStats() []NodeStat {
	names := slices.Collect(maps.Keys(s.loads))
	for name := range s.nodes {
		if s.loads[name] == nil {
			names = append(names, name) // registered, nothing assigned or reported yet
		}
	}
	slices.Sort(names)
	out := make([]NodeStat, 0, len(names))
	for _, name := range names {
		l := s.loads[name]
		if l == nil {
			l = &nodeLoad{}
		}
		st := NodeStat{Name: name, Assigned: l.slots, Containers: l.containers,
			ReservedMemory: l.used.Memory, ReservedCPU: float64(l.used.CPU) / 1024, Availability: s.configs[name].Availability}
		if n := s.nodes[name]; n != nil {
			st.Alive = n.alive
			st.CapacityMemory, st.CapacityCPU = n.node.Capacity.Memory, float64(n.node.Capacity.CPUs)
			st.HostMemory, st.HostCPU = n.node.Reserved.Memory, n.node.Reserved.CPUs
		}
		if st.Alive || st.Assigned > 0 || st.Containers > 0 {
			out = append(out, st)
		}
	}
	return out
}

// ControllerStat is one controller as the leader last wrote its status.
type ControllerStat struct {
	ID string
	// Desired is the spec's replicas; 0 for a spec that does not decode.
	Desired int
	// Status is the last status written; nil before the first.
	Status *api.ReplicationControllerStatus
}

// ControllerStats returns every controller with a spec, by id. The
// statuses are shared: never changed once written, they must not be
// changed by the caller either. It asks the loop, waiting for Run to
// start it; nil once it has ended.
func (s *ReplicationManager) ControllerStats() []ControllerStat {
	var out []ControllerStat
	s.onLoop(func() { out = s.controllerStats() })
	return out
}

func (s *ReplicationManager) controllerStats() []ControllerStat {
	out := make([]ControllerStat, 0, len(s.specs))
	for _, id := range slices.Sorted(maps.Keys(s.specs)) {
		st := ControllerStat{ID: id}
		if c := s.specs[id].spec.Controller; c != nil {
			st.Desired = c.DesiredState.Replicas
		}
		if rec := s.records[id]; rec != nil {
			st.Status = rec.status
		}
		out = append(out, st)
	}
	return out
}
