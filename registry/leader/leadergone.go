package leader

// This file is the leader's record of gone nodes (docs/CONTRACT.md,
// Nodes). When a node's registration vanishes (its lease is gone), the
// leader writes /registry/gonenodes/<node>: when it went, and the
// containers its last reports listed, which may still run there (a node
// cut off from etcd keeps running them: docs/NODES.md, The partition
// trade-off). It removes the record when the node registers again, or
// once nothing is assigned to the node and api.GoneNodeRetention has
// passed. Each write is guarded by the election, as every leader write.
//
// A node's reports live under its lease and go in the same etcd revision
// as its registration, but two mirrors bring them, in either order: a
// report deleted while its node still looks registered is kept aside
// until the registration's delete says whether it went with the node
// (the same revision) or before it (the node removed it itself).

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// goneNode is the leader's view of one node's record.
type goneNode struct {
	// want is the record that should be in etcd, and stored the one etcd
	// holds as far as the leader knows; nil: none.
	want, stored *api.GoneNode
	// busy: a write is in flight.
	busy bool
	// held are want's containers by controller, as decide counts them:
	// until the node has been gone for the grace period they may run, and
	// their slots are held off other nodes (leaderheld.go).
	held map[string][]decide.Container
}

// setWant makes rec the record g should have, and indexes its containers.
func (g *goneNode) setWant(rec *api.GoneNode) {
	g.want, g.held = rec, nil
	if rec == nil {
		return
	}
	g.held = make(map[string][]decide.Container)
	for _, c := range rec.Containers {
		g.held[c.Controller] = append(g.held[c.Controller], goneContainer(rec.Name, c))
	}
}

// droppedReports are the reports on one node deleted at rev while the
// node still looked registered.
type droppedReports struct {
	rev     int64
	reports map[string]*leaderReport
}

// loadGoneNodes takes the records a previous leader left, so that this
// one removes them in its turn.
func (s *ReplicationManager) loadGoneNodes(list []api.GoneNode) {
	for i := range list {
		g := list[i]
		n := &goneNode{stored: &g}
		n.setWant(&g)
		s.gone[g.Name] = n
	}
}

// stashReport keeps old, node's report on id deleted at rev, while node
// still looks registered: it may have gone with the node's lease.
func (s *ReplicationManager) stashReport(id, node string, old *leaderReport, rev int64) {
	if n := s.nodes[node]; n == nil || !n.alive {
		return // gone already: its record holds what it last reported
	}
	d := s.dropped[node]
	if d == nil || d.rev != rev {
		d = &droppedReports{rev: rev, reports: map[string]*leaderReport{}}
		s.dropped[node] = d
	}
	d.reports[id] = old
}

// nodeWent records that node's registration vanished at rev (0: a list
// no longer had it): its record lists what its reports still held, and
// those that went in the same revision.
func (s *ReplicationManager) nodeWent(node string, rev int64) {
	rec := &api.GoneNode{Name: node, GoneSince: s.now().UTC()}
	add := func(id string, r *leaderReport) {
		for i, c := range r.containers {
			last := r.last[i]
			rec.Containers = append(rec.Containers, api.GoneContainer{Controller: id, Slot: c.Slot, Name: last.nameOf(id, c),
				Image: last.image.Value(), State: last.state.Value()})
		}
	}
	for id, byNode := range s.reports {
		if r := byNode[node]; r != nil {
			add(id, r)
		}
	}
	if d := s.dropped[node]; d != nil && (d.rev == rev || rev == 0) {
		for id, r := range d.reports {
			if s.reports[id][node] == nil {
				add(id, r)
			}
		}
	}
	delete(s.dropped, node)
	slices.SortFunc(rec.Containers, func(a, b api.GoneContainer) int {
		return cmp.Or(strings.Compare(a.Controller, b.Controller), cmp.Compare(a.Slot, b.Slot), strings.Compare(a.Name, b.Name))
	})
	if n := len(rec.Containers); n > api.MaxGoneContainers {
		rec.Containers, rec.Omitted = rec.Containers[:api.MaxGoneContainers], n-api.MaxGoneContainers
	}
	g := s.goneOf(node)
	g.setWant(rec)
	s.syncGone(node)
}

// nodeCame records that node is registered: its record goes.
func (s *ReplicationManager) nodeCame(node string) {
	delete(s.dropped, node)
	if g := s.gone[node]; g != nil && g.want != nil {
		g.setWant(nil)
		s.syncGone(node)
	}
}

// expireGoneNodes forgets the gone nodes that hold no slot and went
// longer than api.GoneNodeRetention ago, and writes again what a failed
// write left undone: on the periodic pass.
func (s *ReplicationManager) expireGoneNodes() {
	now := s.now()
	for _, node := range slices.Sorted(maps.Keys(s.gone)) {
		g := s.gone[node]
		if g.want != nil && now.Sub(g.want.GoneSince) >= api.GoneNodeRetention && s.slotsOn(node) == 0 {
			s.logger.Info("gone node forgotten: nothing is assigned to it", "node", node, "goneSince", g.want.GoneSince)
			g.setWant(nil)
		}
		s.syncGone(node)
	}
}

// slotsOn counts the slots assigned to node.
func (s *ReplicationManager) slotsOn(node string) int {
	if l := s.loads[node]; l != nil {
		return l.slots
	}
	return 0
}

func (s *ReplicationManager) goneOf(node string) *goneNode {
	g := s.gone[node]
	if g == nil {
		g = &goneNode{}
		s.gone[node] = g
	}
	return g
}

// syncGone makes etcd hold node's record as wanted: a put of the wanted
// one, or a delete when none is. One write per node is in flight at a
// time; its answer syncs again.
func (s *ReplicationManager) syncGone(node string) {
	g := s.gone[node]
	switch {
	case g == nil || g.busy || s.goneOff:
	case g.want == nil && g.stored == nil:
		delete(s.gone, node)
	case g.want != g.stored:
		g.busy = true
		want := g.want
		write := func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
			defer cancel()
			if want == nil {
				return s.store.DeleteGoneNode(ctx, s.opts.Guard, node)
			}
			return s.store.PutGoneNode(ctx, s.opts.Guard, want)
		}
		t := s.term
		t.async.Go(func() {
			err := write(t.ctx)
			s.send(func() { s.goneWritten(node, want, err) })
		})
	}
}

// goneWritten applies the answer err to the write of node's record as
// want (nil: its removal).
func (s *ReplicationManager) goneWritten(node string, want *api.GoneNode, err error) {
	g := s.goneOf(node)
	g.busy = false
	switch {
	case errors.Is(err, registry.ErrNotLeader):
		s.term.fail(err)
		return
	case err != nil:
		// the periodic pass tries again
		s.logger.Warn("writing the record of a gone node failed", "node", node, "err", err)
		return
	case want != nil:
		s.logger.Info("gone node recorded with its last containers", "node", node, "containers", len(want.Containers))
	}
	g.stored = want
	s.syncGone(node) // it may have changed meanwhile
}
