package leader

// This file is the nodes as the leader's decisions see them: every node
// registered or holding slots, in name order, with what it may hand out
// (its capacity less its host's reserve) and what all the assigned
// slots hold there. The leader keeps the view in step with its mirrors,
// one node at a time as its registration or its load changes, so that a
// decision copies it in one go and takes out only its own controller's
// slots, on the few nodes that hold them, instead of building every node
// from the maps again (at 100 nodes, that was a fifth of a decision's
// cost, a sort of their names included).

import (
	"slices"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// nodeView holds the nodes in name order; Slots, Used and Ports count
// every controller's slots.
type nodeView struct {
	nodes []decide.Node
}

// entry returns the node called name, added in order when it is new.
func (v *nodeView) entry(name string) *decide.Node {
	i, ok := decide.FindNode(v.nodes, name)
	if !ok {
		v.nodes = slices.Insert(v.nodes, i, decide.Node{Name: name})
	}
	return &v.nodes[i]
}

// set makes the entry of name what its registration ns (nil: never seen
// registered, gone since started), its config c (its labels over the
// registered ones) and its load l (nil: none) say. The
// maps it holds are never changed after, only replaced, so a copy of the
// view stays as it was taken.
func (v *nodeView) set(name string, ns *nodeState, c api.NodeConfig, l *nodeLoad, started time.Time) {
	n := v.entry(name)
	*n = decide.Node{Name: name, GoneSince: started, Availability: c.Availability}
	if ns != nil {
		n.Labels, n.Alive, n.GoneSince = api.MergeNodeLabels(ns.node.Labels, c.Labels), ns.alive, ns.goneSince
		n.Capacity = allocatable(&ns.node)
	}
	if l == nil {
		return
	}
	n.Slots, n.Used = l.slots, l.used
	for p, count := range l.ports {
		if count > 0 {
			if n.Ports == nil {
				n.Ports = map[string]bool{}
			}
			n.Ports[p] = true
		}
	}
}

// allocatable is what placement may hand out of node n: what it
// registered less what its host keeps for itself (--node-reserve). A
// resource the node did not tell stays 0, not enforced; one the reserve
// takes all of is 1, so that it is still enforced and nothing fits.
func allocatable(n *api.Node) decide.Resources {
	left := func(capacity, reserved int64) int64 {
		if capacity <= 0 {
			return 0
		}
		return max(capacity-reserved, 1)
	}
	return decide.Resources{
		Memory: left(n.Capacity.Memory, n.Reserved.Memory),
		CPU:    left(int64(n.Capacity.CPUs)*1024, n.Reserved.CPUShares()),
	}
}

// forController returns into buf the view as a decision of the
// controller with spec sp and these assignments sees it: what the other
// controllers' slots hold on each node. loads gives the host ports'
// counts on the nodes the controller is on.
func (v *nodeView) forController(buf []decide.Node, sp *schedSpec, assigned map[int]decide.Assignment, loads map[string]*nodeLoad) []decide.Node {
	out := append(buf[:0], v.nodes...)
	if len(assigned) == 0 {
		return out
	}
	mine := make(map[string]int, len(assigned))
	for _, a := range assigned {
		mine[a.Node]++
	}
	for name, count := range mine {
		i, ok := decide.FindNode(out, name)
		if !ok {
			continue // every assigned node has a load, so an entry
		}
		n := &out[i]
		n.Slots -= count
		if sp == nil || sp.invalid != nil {
			continue // its slots hold no room
		}
		n.Used.Memory -= int64(count) * sp.ctl.Reserve.Memory
		n.Used.CPU -= int64(count) * sp.ctl.Reserve.CPU
		if len(sp.ctl.Ports) == 0 {
			continue
		}
		l := loads[name]
		if l == nil {
			continue
		}
		var ports map[string]bool // decide asks only for the controller's own
		for _, p := range sp.ctl.Ports {
			if l.ports[p]-count > 0 {
				if ports == nil {
					ports = map[string]bool{}
				}
				ports[p] = true
			}
		}
		n.Ports = ports
	}
	return out
}

// syncView makes node's entry in the view what the mirrors say.
func (s *ReplicationManager) syncView(node string) {
	s.view.set(node, s.nodes[node], s.configs[node], s.loads[node], s.started)
}
