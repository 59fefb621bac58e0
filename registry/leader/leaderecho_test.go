package leader

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
)

// listedLeader is a leader whose mirrors count as listed, the nodes and
// their configs as of every revision, with no etcd behind it: what its
// mirrors do with a change can be driven by hand, and it asks no etcd
// where the watches are.
func listedLeader(t *testing.T) *ReplicationManager {
	t.Helper()
	s := NewReplicationManager(registry.NewStore(nil, "/"+t.Name()), slog.New(slog.DiscardHandler), Options{})
	for _, a := range []*progressAsker{s.viewAsk, s.reportsAsk, s.caughtUpAsk} {
		a.ctx = t.Context()
		a.request = func(context.Context, string) error { return nil }
	}
	for prefix := range s.targets() {
		s.listed[prefix] = true
	}
	for _, prefix := range s.viewPrefixes() {
		s.viewRevs[prefix] = math.MaxInt64
	}
	return s
}

// deliver applies what the mirrors' callbacks sent to the mailbox, in
// order, as the loop does: the test's goroutine is the loop.
func (s *ReplicationManager) deliver() {
	for {
		select {
		case event := <-s.mailbox.events:
			s.take(event)
		default:
			return
		}
	}
}

// queuedIn returns the lane id is queued in, or false.
func queuedIn(s *ReplicationManager, id string) (lane, bool) {
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	l, ok := s.queue.queued[id]
	return l, ok
}

// TestTheEchoOfTheLeadersOwnWriteDecidesNothing: while a write of
// assignments is in flight, the watch's echo of it is applied to the
// mirror at once (the next decision compares the right revision) without
// queueing the controller again; a different value at the same key, a
// key the write does not hold, and any echo once the write is answered,
// are changes that queue it.
func TestTheEchoOfTheLeadersOwnWriteDecidesNothing(t *testing.T) {
	s := listedLeader(t)
	next := api.Assignment{Node: "a", Revision: 7, TemplateHash: "h1"}
	w := registry.LeaderWrite{ID: "web", Changes: []registry.AssignChange{
		{ID: "web", Slot: 1, Next: &next},
		{ID: "web", Slot: 2, OldRev: 3}, // a delete
	}}
	if bw := s.store.Prepare(w, nil); bw.Err != nil {
		t.Fatal(bw.Err)
	}
	data, err := json.Marshal(next)
	if err != nil {
		t.Fatal(err)
	}
	if string(w.Changes[0].Data) != string(data) {
		t.Fatalf("Prepare set Data %q, want %q", w.Changes[0].Data, data)
	}
	s.assignments["web"] = registry.SlotAssignments{}.With(2, registry.SlotAssignment{Assignment: api.Assignment{Node: "b"}, Rev: 3})
	own := &inflightWrite{changes: w.Changes}
	s.inflight["web"] = own

	s.putAssignment(registry.KV{Key: s.store.AssignmentKey("web", 1), Value: data, ModRev: 10})
	s.deliver()
	s.delAssignment(s.store.AssignmentKey("web", 2), 10)
	s.deliver()
	if l, ok := queuedIn(s, "web"); ok {
		t.Fatalf("the echo of its own write queued web in lane %d", l)
	}
	if !own.echoed {
		t.Error("the write is not marked echoed")
	}
	got := s.assignments["web"]
	if a, ok := got.Get(1); !ok || a.Assignment != next || a.Rev != 10 {
		t.Errorf("slot 1 in the mirror: %+v (%v), want %+v at revision 10", a, ok, next)
	}
	if _, ok := got.Get(2); ok {
		t.Error("slot 2 is still in the mirror after the echo of its delete")
	}
	if l := s.loads["a"]; l == nil || l.slots != 1 || l.ids["web"] != 1 {
		t.Errorf("node a's load %+v, want web's one slot", l)
	}

	other, err := json.Marshal(api.Assignment{Node: "b", Revision: 7, TemplateHash: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		kv   registry.KV
	}{
		{"another value", registry.KV{Key: s.store.AssignmentKey("web", 1), Value: other, ModRev: 11}},
		{"a slot the write does not hold", registry.KV{Key: s.store.AssignmentKey("web", 3), Value: data, ModRev: 11}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.queue = newLaneQueue(wallClock{})
			s.putAssignment(tc.kv)
			s.deliver()
			if l, ok := queuedIn(s, "web"); !ok || l != laneChange {
				t.Errorf("web queued %v in lane %d, want the lane of changes", ok, l)
			}
		})
	}

	delete(s.inflight, "web")
	s.queue = newLaneQueue(wallClock{})
	s.putAssignment(registry.KV{Key: s.store.AssignmentKey("web", 4), Value: data, ModRev: 12})
	s.deliver()
	if _, ok := queuedIn(s, "web"); !ok {
		t.Error("a put with no write in flight did not queue web")
	}
}

// TestSpecsOfAListAreDecodedOnEveryCPU: a list of many specs decodes to
// the same records, each under its own id, as one at a time does.
func TestSpecsOfAListAreDecodedOnEveryCPU(t *testing.T) {
	s := listedLeader(t)
	const n = 3*specsPerDecoder + 7
	var keys []registry.KV
	for i := range n {
		id := fmt.Sprintf("c%04d", i)
		rc := demospec.Controller(id, "demo-task:latest", i%5+1, nil)
		value, err := json.Marshal(rc)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, registry.KV{Key: s.store.ControllersPrefix() + id, Value: value, ModRev: int64(i + 1), CreateRev: int64(i + 1)})
	}
	keys = append(keys, registry.KV{Key: s.store.ControllersPrefix() + "bad", Value: []byte("{"), ModRev: 1, CreateRev: 1})
	got := s.decodeSpecs(keys)
	if len(got) != n+1 {
		t.Fatalf("%d specs decoded, want %d", len(got), n+1)
	}
	for _, k := range keys {
		one := s.decodeSpec(k)
		sp := got[one.spec.ID]
		if sp == nil || sp.spec.ModRevision != k.ModRev || sp.hash != one.hash || sp.ctl.Replicas != one.ctl.Replicas || (sp.invalid == nil) != (one.invalid == nil) {
			t.Errorf("%s: decoded %+v, want %+v", one.spec.ID, sp, one)
		}
	}
	if got["bad"].invalid == nil {
		t.Error("the undecodable spec is not marked invalid")
	}
	if got["c0001"].invalid != nil {
		t.Errorf("c0001 is invalid: %v", got["c0001"].invalid)
	}
}
