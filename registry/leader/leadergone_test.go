package leader

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// goneLeader is a listed leader whose records of gone nodes stay in
// memory (no etcd behind it), on a clock the test sets.
func goneLeader(t *testing.T, now *time.Time) *ReplicationManager {
	t.Helper()
	s := listedLeader(t)
	s.goneOff = true
	s.now = func() time.Time { return *now }
	return s
}

func (s *ReplicationManager) testPutNode(t *testing.T, name string) {
	t.Helper()
	data, err := json.Marshal(api.Node{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	s.putNode(registry.KV{Key: s.store.NodeKey(name), Value: data})
	s.deliver()
}

// testPutSpec puts the demo controller id of replicas into the spec
// mirror at revision 2, as its watch would.
func (s *ReplicationManager) testPutSpec(t *testing.T, id string, replicas int) {
	t.Helper()
	data, err := json.Marshal(demospec.Controller(id, "demo:1", replicas, nil))
	if err != nil {
		t.Fatal(err)
	}
	s.putSpec(registry.KV{Key: s.store.ControllerKey(id), Value: data, ModRev: 2, CreateRev: 2})
	s.deliver()
}

func (s *ReplicationManager) testPutReport(t *testing.T, id, node string, rev int64, tasks ...api.ReportedTask) {
	t.Helper()
	data, err := json.Marshal(api.NodeReport{Node: node, Status: api.ReplicationControllerStatus{ID: id}, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	s.putReport(registry.KV{Key: s.store.ReportKey(id, node), Value: data, ModRev: rev})
	s.deliver()
}

func task(name string, slot int, image string) api.ReportedTask {
	return api.ReportedTask{Name: name, Slot: slot, Image: image, State: api.StateRunning}
}

// TestAGoneNodeIsRecordedWithTheContainersItsLastReportsListed: the
// reports that went with the node's lease are in its record, whether the
// mirrors bring their deletes before the node's or after; a report the
// node removed itself before it went is not; the record goes when the
// node registers again.
func TestAGoneNodeIsRecordedWithTheContainersItsLastReportsListed(t *testing.T) {
	for _, reportsFirst := range []bool{true, false} {
		now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
		s := goneLeader(t, &now)
		s.testPutNode(t, "a")
		s.testPutNode(t, "b")
		s.testPutReport(t, "web", "a", 2, task("web-2", 2, "demo:1"))
		s.testPutReport(t, "web", "b", 3, task("web-1", 1, "demo:1"), task("web-3", 3, "demo:2"))
		// db-1-old: renamed out of its slot's name by a start-first step
		s.testPutReport(t, "db", "b", 4, task("db-1", 1, "db:1"), task("db-1-old", 1, "db:0"))
		s.testPutReport(t, "old", "b", 5, task("old-1", 1, "old:1"))
		s.delReport(s.store.ReportKey("old", "b"), 6) // the node removed it itself
		s.deliver()

		const leaseGone = 9
		if reportsFirst {
			s.delReport(s.store.ReportKey("web", "b"), leaseGone)
			s.deliver()
		}
		s.delNode(s.store.NodeKey("b"), leaseGone)
		s.deliver()
		s.delReport(s.store.ReportKey("db", "b"), leaseGone)
		s.deliver()
		if !reportsFirst {
			s.delReport(s.store.ReportKey("web", "b"), leaseGone)
			s.deliver()
		}

		g := s.gone["b"]
		if g == nil || g.want == nil {
			t.Fatalf("reports first %v: no record of b", reportsFirst)
		}
		want := []api.GoneContainer{
			{Controller: "db", Slot: 1, Name: "db-1", Image: "db:1", State: api.StateRunning},
			{Controller: "db", Slot: 1, Name: "db-1-old", Image: "db:0", State: api.StateRunning},
			{Controller: "web", Slot: 1, Name: "web-1", Image: "demo:1", State: api.StateRunning},
			{Controller: "web", Slot: 3, Name: "web-3", Image: "demo:2", State: api.StateRunning},
		}
		if got := g.want.Containers; len(got) != len(want) || !g.want.GoneSince.Equal(now) {
			t.Fatalf("reports first %v: record %+v, want %+v since %v", reportsFirst, g.want, want, now)
		}
		for i := range want {
			if g.want.Containers[i] != want[i] {
				t.Errorf("reports first %v: container %d is %+v, want %+v", reportsFirst, i, g.want.Containers[i], want[i])
			}
		}
		if s.gone["a"] != nil {
			t.Errorf("a, which did not go, has a record")
		}

		s.testPutNode(t, "b")
		if g := s.gone["b"]; g != nil && g.want != nil {
			t.Errorf("reports first %v: b registered again, and its record is still wanted", reportsFirst)
		}
	}
}

// TestAGoneNodeIsForgottenADayAfterItWentOnceNothingIsAssignedToIt.
func TestAGoneNodeIsForgottenADayAfterItWentOnceNothingIsAssignedToIt(t *testing.T) {
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	s := goneLeader(t, &now)
	s.testPutNode(t, "b")
	s.setAssignment("web", 1, &registry.SlotAssignment{Assignment: api.Assignment{Node: "b"}, Rev: 2})
	s.delNode(s.store.NodeKey("b"), 3)
	s.deliver()

	now = now.Add(api.GoneNodeRetention + time.Minute)
	s.expireGoneNodes()
	if g := s.gone["b"]; g == nil || g.want == nil {
		t.Fatal("b forgotten while a slot is still assigned to it")
	}
	s.setAssignment("web", 1, nil)
	s.expireGoneNodes()
	if g := s.gone["b"]; g != nil && g.want != nil {
		t.Error("b kept a day after it went, with nothing assigned to it")
	}
}

// TestASlotPlacedOffAGoneNodeIsAMovedEvent: a slot that leaves a gone
// node for another is a Moved event naming both; a move off a live node
// (a drain) and a slot that stays are none.
func TestASlotPlacedOffAGoneNodeIsAMovedEvent(t *testing.T) {
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	s := goneLeader(t, &now)
	s.testPutNode(t, "a")
	s.testPutNode(t, "b")
	s.testPutNode(t, "c")
	s.delNode(s.store.NodeKey("b"), 3)
	s.deliver()
	before := map[int]decide.Assignment{1: {Node: "b"}, 2: {Node: "c"}, 3: {Node: "a"}}
	s.recordMoves("web", before, []registry.AssignChange{
		{ID: "web", Slot: 1, Next: &api.Assignment{Node: "a"}},
		{ID: "web", Slot: 2, Next: &api.Assignment{Node: "a"}},
		{ID: "web", Slot: 3, Next: &api.Assignment{Node: "a", Revision: 2}},
	}, nil)
	if n := len(s.events); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	ev := <-s.events
	if ev.Type != api.EventNormal || ev.Reason != ReasonMoved || ev.Controller != "web" || ev.Message != "web-1 moved from b to a (b gone)" {
		t.Errorf("event %+v, want Normal Moved \"web-1 moved from b to a (b gone)\"", ev)
	}
}

// TestASlotTakenOffALiveNodeToMoveIsAMovedEventWithItsReason: the first
// phase of a move off a live node is an event naming the reason; a
// scale-down's removal is none.
func TestASlotTakenOffALiveNodeToMoveIsAMovedEventWithItsReason(t *testing.T) {
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	s := goneLeader(t, &now)
	s.testPutNode(t, "a")
	before := map[int]decide.Assignment{1: {Node: "a"}, 2: {Node: "a"}}
	s.recordMoves("web", before, []registry.AssignChange{{ID: "web", Slot: 1}, {ID: "web", Slot: 2}},
		[]decide.Move{{Slot: 1, Node: "a", Reason: decide.MoveDrain}})
	if n := len(s.events); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	ev := <-s.events
	if ev.Reason != ReasonMoved || !strings.Contains(ev.Message, "web-1 moves off a (drain: node a is drained)") {
		t.Errorf("event %+v, want Moved naming the drain", ev)
	}
}
