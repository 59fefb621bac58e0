package leader

// This file is the events the leader records for people (rcctl describe,
// the status page): Moved, when it places a slot of a gone node on
// another, or takes one off a live node to move it (a drain, a label or
// selector change), with the reason. A decision never waits for an event: recordEvent
// queues it, and one goroutine of the term writes the queue under a
// lease of about an hour, as the nodes write theirs. An event that finds
// the queue full, or etcd away, is dropped.

import (
	"context"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// ReasonMoved is the reason of the event of a slot placed again off a
// gone node, or taken off a live node to move.
const ReasonMoved = "Moved"

// Events live about an hour, as the nodes' (registry/agent/events.go).
const (
	eventTTL        = time.Hour
	eventLeaseReuse = 10 * time.Minute
	// eventQueue is how many events may wait to be written, and
	// eventBatch how many one transaction writes.
	eventQueue = 1024
	eventBatch = 64
)

// recordMoves records a Moved event for each change that placed a slot
// of a gone node on another node, and for each that took a slot off a
// live node to move it (one of moves); before are the assignments the
// changes were decided from.
func (s *ReplicationManager) recordMoves(id string, before map[int]decide.Assignment, changes []registry.AssignChange, moves []decide.Move) {
	for _, c := range changes {
		old, ok := before[c.Slot]
		if i := slices.IndexFunc(moves, func(m decide.Move) bool { return m.Slot == c.Slot }); ok && c.Next == nil && i >= 0 {
			m := moves[i]
			s.recordEvent(api.Event{Controller: id, Type: api.EventNormal, Reason: ReasonMoved,
				Message: fmt.Sprintf("%s moves off %s (%s: %s); it is placed again once its container there is gone", api.TaskName(id, c.Slot), m.Node, m.Reason, moveWhy(m))})
			continue
		}
		if !ok || c.Next == nil || c.Next.Node == old.Node {
			continue
		}
		if n := s.nodes[old.Node]; n != nil && n.alive {
			continue // a move off a live node: a drain, a selector
		}
		s.recordEvent(api.Event{Controller: id, Type: api.EventNormal, Reason: ReasonMoved,
			Message: fmt.Sprintf("%s moved from %s to %s (%s gone)", api.TaskName(id, c.Slot), old.Node, c.Next.Node, old.Node)})
	}
}

// moveWhy says a move's reason in words.
func moveWhy(m decide.Move) string {
	switch m.Reason {
	case decide.MoveDrain:
		return "node " + m.Node + " is drained"
	case decide.MoveLabels:
		return "node " + m.Node + "'s labels no longer match the nodeSelector"
	case decide.MoveSelector:
		return "the nodeSelector no longer matches node " + m.Node
	}
	return "a container outside the set holds its name on " + m.Node
}

// recordEvent queues ev; it never blocks.
func (s *ReplicationManager) recordEvent(ev api.Event) {
	ev.Time = s.now().UTC()
	select {
	case s.events <- ev:
	default:
		s.logger.Debug("event dropped: the queue is full", "controller", ev.Controller, "reason", ev.Reason)
	}
}

// runEvents writes the queued events until ctx ends.
func (s *ReplicationManager) runEvents(ctx context.Context) {
	var lease clientv3.LeaseID
	var leaseAt time.Time
	seq := 0
	for {
		var batch []api.Event
		select {
		case <-ctx.Done():
			return
		case ev := <-s.events:
			batch = append(batch, ev)
		}
		for len(batch) < eventBatch && len(s.events) > 0 {
			batch = append(batch, <-s.events)
		}
		err := func() error {
			wctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
			defer cancel()
			if lease == 0 || s.now().Sub(leaseAt) >= eventLeaseReuse {
				l, err := s.store.GrantLease(wctx, eventTTL)
				if err != nil {
					return err
				}
				lease, leaseAt = l, s.now()
			}
			named := make([]registry.NamedEvent, len(batch))
			for i := range batch {
				seq++
				// the nodes' names are <nanos>-<seq>: "leader" keeps these apart
				named[i] = registry.NamedEvent{Name: fmt.Sprintf("%020d-leader-%06d", batch[i].Time.UnixNano(), seq%1_000_000), Event: &batch[i]}
			}
			return s.store.PutEvents(wctx, named, lease)
		}()
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("recording events failed; dropped", "events", len(batch), "err", err)
		}
	}
}
