package leader

// This file holds the slots of a gone node off the other nodes until the
// node has been gone for --node-grace. A node's reports live under its
// lease and vanish with it, but a manager stopped by SIGTERM or killed
// leaves its containers running; the gone node's record (leadergone.go)
// keeps what its last reports listed, and the decision counts those
// containers as the reports would have, so that no slot is placed on a
// second node while the first may still run it.

import (
	"maps"
	"slices"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// goneContainer is a container of a gone node's record as decide counts
// it: live as its last report said, never ready (nothing reports on it).
func goneContainer(node string, c api.GoneContainer) decide.Container {
	return decide.Container{Node: node, Slot: c.Slot, Named: api.IsTaskName(c.Name, c.Controller, c.Slot), Live: liveState(c.State)}
}

// heldOnGoneNodes returns, by node, controller id's containers on the gone
// nodes that have no report of it (their reports went with their lease).
// decide drops those of nodes gone past the grace. (A report deleted
// while its node still looks registered is not counted: most such are
// the node's own, of a controller it has nothing of left, and the
// registration's delete of a lease that went follows at once.)
func (s *ReplicationManager) heldOnGoneNodes(id string) map[string][]decide.Container {
	var out map[string][]decide.Container
	for node, g := range s.gone {
		cts := g.held[id]
		if len(cts) == 0 || s.reports[id][node] != nil {
			continue
		}
		if n := s.nodes[node]; n != nil && n.alive {
			continue // back: its own reports tell
		}
		if out == nil {
			out = make(map[string][]decide.Container)
		}
		out[node] = cts
	}
	return out
}

// addGoneNodes adds the containers of gone nodes to in, as their reports
// would: live ones hold their slots.
func addGoneNodes(in *decide.Input, gone map[string][]decide.Container) {
	for _, node := range slices.Sorted(maps.Keys(gone)) {
		cts := gone[node]
		var slots []int
		for _, ct := range cts {
			if ct.Live {
				slots = append(slots, ct.Slot)
			}
		}
		in.Reports[node] = decide.Report{Slots: decide.NewSlotSet(slots...)}
		in.Containers = append(in.Containers, cts...)
	}
}
