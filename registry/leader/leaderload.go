package leader

// This file is the leader's bookkeeping of what each node holds: the
// slots assigned there, the room and host ports their specs reserve, and
// the containers the node reports. The mirrors keep it in step with the
// assignments, the specs and the reports; a decision counts the slots its
// write places until the answer comes (assume); the view the decisions
// see is made from it (leaderview.go).

import (
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// nodeLoad is what the assigned slots hold on one node.
type nodeLoad struct {
	slots int
	used  decide.Resources
	// ports counts the slots publishing each host port.
	ports map[string]int
	// containers counts the containers the node reports.
	containers int
	// ids counts the slots of each controller assigned to the node.
	ids map[string]int
}

// hold counts one slot of controller id on the node (n 1) or one less
// (-1).
func (l *nodeLoad) hold(id string, n int) {
	if l.ids == nil {
		l.ids = map[string]int{}
	}
	l.ids[id] += n
	if l.ids[id] <= 0 {
		delete(l.ids, id)
	}
}

// add counts one slot (sign 1) of a controller with spec sp, or takes it
// away (-1); a slot of a controller without a spec holds no room, and one
// whose spec is invalid what its last valid spec reserved (heldFrom).
func (l *nodeLoad) add(sp *schedSpec, sign int) {
	l.slots += sign
	if sp == nil {
		return
	}
	l.used.Memory += int64(sign) * sp.ctl.Reserve.Memory
	l.used.CPU += int64(sign) * sp.ctl.Reserve.CPU
	for _, p := range sp.ctl.Ports {
		if l.ports == nil {
			l.ports = map[string]int{}
		}
		l.ports[p] += sign
	}
}

// loadOf adds (sign 1) or takes away (-1) what the slots of id hold on
// their nodes under its current spec: around a spec change.
func (s *ReplicationManager) loadOf(id string, sign int) {
	for _, a := range s.assignments[id].All() {
		s.addLoad(a.Node, s.specs[id], sign)
	}
}

// addLoad counts one slot of a controller with spec sp on node (sign 1),
// or one less (-1), in its load and in the view.
func (s *ReplicationManager) addLoad(node string, sp *schedSpec, sign int) {
	s.load(node).add(sp, sign)
	s.syncView(node)
}

func (s *ReplicationManager) load(node string) *nodeLoad {
	l := s.loads[node]
	if l == nil {
		l = &nodeLoad{}
		s.loads[node] = l
	}
	return l
}

// holdSlot counts one slot of controller id on node (sign 1), or one less
// (-1), with what its spec reserves there.
func (s *ReplicationManager) holdSlot(id, node string, sign int) {
	s.addLoad(node, s.specs[id], sign)
	s.load(node).hold(id, sign)
}

// countReport counts the containers of node's report r (sign 1), or
// takes them away (-1).
func (s *ReplicationManager) countReport(node string, r *leaderReport, sign int) {
	s.load(node).containers += sign * len(r.containers)
}

// assume counts in the loads (sign 1) the slots that changes place on a
// node, from the decision until its write is applied or has failed (-1
// takes them back), so that the decisions made meanwhile see them, as the
// Kubernetes scheduler assumes a pod bound before its binding is written.
// Without it, the decisions made while hundreds of writes are in flight
// place their slots on the same least loaded nodes.
func (s *ReplicationManager) assume(sp *schedSpec, before map[int]decide.Assignment, changes []registry.AssignChange, sign int) {
	for _, c := range changes {
		if old, ok := before[c.Slot]; c.Next != nil && (!ok || old.Node != c.Next.Node) {
			s.addLoad(c.Next.Node, sp, sign)
		}
	}
}
