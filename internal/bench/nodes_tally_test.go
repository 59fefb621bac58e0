package bench

import (
	"fmt"
	"testing"
	"time"
)

// puts returns events that put n slots of one controller on node.
func puts(id, node string, from, to int) []assignmentEvent {
	var out []assignmentEvent
	for slot := from; slot <= to; slot++ {
		out = append(out, assignmentEvent{key: fmt.Sprintf("/a/%s/%d", id, slot), node: node})
	}
	return out
}

func TestTallyTimesTheResponseThatCreatesTheLastKey(t *testing.T) {
	tally := newAssignmentTally()
	tally.expectCreates(4)
	t0 := time.Unix(100, 0)
	tally.apply(puts("rc-1", "a", 1, 2), t0)
	// a key put again is no create
	tally.apply(puts("rc-1", "b", 2, 2), t0.Add(time.Second))
	if n, first, at := tally.created(); n != 2 || !first.Equal(t0) || !at.IsZero() {
		t.Fatalf("after 2 of 4 keys: created %d, first at %v, all at %v; want 2, first at t0 and no time", n, first, at)
	}
	tally.apply(puts("rc-2", "b", 1, 2), t0.Add(2*time.Second))
	tally.apply(puts("rc-3", "b", 1, 1), t0.Add(3*time.Second))
	if n, _, at := tally.created(); n != 5 || !at.Equal(t0.Add(2*time.Second)) {
		t.Errorf("created %d at %v, want 5, reached at %v", n, at, t0.Add(2*time.Second))
	}
	if got := tally.writeCount(); got != 6 {
		t.Errorf("writes %d, want 6", got)
	}
}

func TestTallyTimesTheMoveOfEverySlotOfADeadNode(t *testing.T) {
	tally := newAssignmentTally()
	t0 := time.Unix(100, 0)
	tally.apply(append(puts("rc-1", "a", 1, 3), puts("rc-2", "b", 1, 3)...), t0)
	if n := tally.track("a"); n != 3 {
		t.Fatalf("track(a) = %d, want its 3 slots", n)
	}
	// a write that leaves a slot on the dead node moves nothing; a slot of
	// another node moved does not count either
	tally.apply([]assignmentEvent{{key: "/a/rc-1/1", node: "a"}, {key: "/a/rc-2/1", node: "c"}}, t0.Add(time.Second))
	tally.apply([]assignmentEvent{{key: "/a/rc-1/1", node: "b"}, {key: "/a/rc-1/2", node: "c"}}, t0.Add(2*time.Second))
	if left, at, _ := tally.moved(); left != 1 || !at.IsZero() {
		t.Fatalf("after 2 of 3 moved: left %d, at %v", left, at)
	}
	// a delete is no move to another node
	tally.apply([]assignmentEvent{{key: "/a/rc-1/3"}}, t0.Add(3*time.Second))
	if left, _, _ := tally.moved(); left != 1 {
		t.Fatalf("after a delete: left %d, want 1", left)
	}
	tally.apply([]assignmentEvent{{key: "/a/rc-1/3", node: "b"}}, t0.Add(4*time.Second))
	left, at, writes := tally.moved()
	if left != 0 || !at.Equal(t0.Add(4*time.Second)) || writes != 6 {
		t.Errorf("moved: left %d at %v after %d writes, want 0 at %v after 6", left, at, writes, t0.Add(4*time.Second))
	}
	// later writes change neither the time nor the count
	tally.apply(puts("rc-9", "b", 1, 1), t0.Add(5*time.Second))
	if _, at2, writes2 := tally.moved(); !at2.Equal(at) || writes2 != writes {
		t.Errorf("after a later write: %v, %d; want %v, %d", at2, writes2, at, writes)
	}
	per := tally.perNode()
	if per["a"] != 0 || per["b"] != 5 || per["c"] != 2 {
		t.Errorf("per node %v, want a 0, b 5, c 2", per)
	}
}

func TestTallyOfANodeWithoutSlotsIsMovedAtTheNextResponse(t *testing.T) {
	tally := newAssignmentTally()
	if n := tally.track("x"); n != 0 {
		t.Fatalf("track(x) = %d", n)
	}
	at := time.Unix(7, 0)
	tally.apply(puts("rc-1", "a", 1, 1), at)
	if left, got, _ := tally.moved(); left != 0 || !got.Equal(at) {
		t.Errorf("moved: %d left at %v, want 0 at %v", left, got, at)
	}
}

func TestBusiestAndSpread(t *testing.T) {
	per := map[string]int{"node-001": 1000, "node-000": 1000, "node-002": 999}
	if got := busiest(per); got != "node-000" {
		t.Errorf("busiest = %q, want node-000 (first by name among equals)", got)
	}
	if got := busiest(nil); got != "" {
		t.Errorf("busiest of nothing = %q", got)
	}
	lo, hi := spreadOf(per, []string{"node-000", "node-001", "node-002", "node-003"})
	if lo != 0 || hi != 1000 {
		t.Errorf("spread = %d-%d, want 0-1000 (node-003 has none)", lo, hi)
	}
}

func TestActivity(t *testing.T) {
	a := &prefixActivity{}
	t0 := time.Unix(100, 0)
	for i := range 4 {
		a.add(activityBatch{writes: 1, statuses: 1}, t0.Add(time.Duration(i)*time.Second))
	}
	a.add(activityBatch{gone: []string{"node-001"}}, t0.Add(5*time.Second))
	if got := a.statusCount(); got != 4 {
		t.Errorf("statuses %d, want 4", got)
	}
	if got := a.lastWrite(); !got.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("last write %v, want t0+5s (a node key's delete counts)", got)
	}
	if got, ok := a.goneAt("node-001"); !ok || !got.Equal(t0.Add(5*time.Second)) {
		t.Errorf("node-001 gone at %v, %v", got, ok)
	}
}
