package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

func TestAPausedNodeGetsNoNewSlotAndKeepsItsOwn(t *testing.T) {
	ns := nodes("a", "b")
	ns[0].Availability = api.NodePause
	r := Decide(Input{Controller: ctl(4), Nodes: ns, Now: t0})
	if got := summary(r); got != "1:b/new 2:b/new 3:b/new 4:b/new" {
		t.Errorf("a new controller of 4 with a paused: %q, want all on b", got)
	}

	as, cs := settled("new", "a", "b")
	c := ctl(4)
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if got := summary(r); got != "3:b/new 4:b/new" {
		t.Errorf("a scale to 4 with a paused: %q, want slot 1 kept on a, the new ones on b", got)
	}
}

func TestADrainedNodesSlotsMoveOffPaced(t *testing.T) {
	as, cs := settled("new", "a", "a", "a", "a")
	ns := nodes("a", "b")
	ns[0].Availability = api.NodeDrain
	r := Decide(Input{Controller: ctl(4), Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if got := summary(r); got != "4:-" {
		t.Errorf("a drain of 4 with maxUnavailable 1: %q, want one slot off at a time", got)
	}
	if len(r.Moves) != 1 || r.Moves[0] != (Move{Slot: 4, Node: "a", Reason: MoveDrain}) {
		t.Errorf("moves = %+v, want slot 4 off a for a drain", r.Moves)
	}

	c := ctl(4)
	c.Unavailable = 2
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if got := summary(r); got != "3:- 4:-" {
		t.Errorf("a drain of 4 with maxUnavailable 2: %q, want two off at a time", got)
	}

	// once slot 4's old container is gone, it is placed on b
	delete(as, 4)
	r = Decide(Input{Controller: ctl(4), Assigned: as, Containers: cs[:3], Nodes: ns, Now: t0})
	if got := summary(r); got != "4:b/new" {
		t.Errorf("after the old container went: %q, want 4 on b and no other move while it starts", got)
	}
}

// A node writes a slot into its report before it creates the slot's
// container, and the report that lists the container comes after: a move
// decided in between used to take every such slot at once, while their
// containers had just started (the e2e slow-stop move under load).
func TestADrainOfSlotsTheNodeHoldsButHasNotReportedRunningIsPacedToo(t *testing.T) {
	as, _ := settled("new", "a", "a", "a")
	ns := nodes("a", "b")
	ns[0].Availability = api.NodeDrain
	held := Report{Slots: NewSlotSet(1, 2, 3)}
	r := Decide(Input{Controller: ctl(3), Assigned: as, Reports: map[string]Report{"a": held}, Nodes: ns, Now: t0})
	if got := summary(r); got != "3:-" {
		t.Errorf("a drain of 3 slots a holds, none reported running yet: %q, want one off at a time", got)
	}

	// a slot a neither runs nor holds moves at once
	r = Decide(Input{Controller: ctl(3), Assigned: as, Reports: map[string]Report{"a": {Slots: NewSlotSet(1)}}, Nodes: ns, Now: t0})
	if got := summary(r); got != "2:- 3:-" {
		t.Errorf("a drain of 3 slots, a holding slot 1 only: %q, want slots 2 and 3 off at once", got)
	}
}

// A node claims a slot before it creates the slot's container, and on a
// loaded engine the create takes seconds: in CI a selector move of slow
// stoppers took slot 2 off a while slot 3, moved first, was only claimed
// on b, and 1 of 3 slots ran (e2e TestTwoNodesSelectorMoveWithSlowStops...).
// A claim may run; it does not count as running for the floor.
func TestAMoveWaitsForTheSlotMovedBeforeToRunOnItsNewNode(t *testing.T) {
	as, cs := settled("new", "a", "a", "b")
	cs = cs[:2]
	cs[1].Ready = false // a health probe timed out: not serving, still running
	c := ctl(3)
	c.Selector = map[string]string{"zone": "b"}
	ns := nodes("a", "b")
	ns[1].Labels = map[string]string{"zone": "b"}
	claimed := map[string]Report{"a": {Slots: NewSlotSet(1, 2)}, "b": {Slots: NewSlotSet(3)}}
	r := Decide(Input{Controller: c, Assigned: as, Containers: cs, Reports: claimed, Nodes: ns, Now: t0})
	if got := summary(r); got != "" {
		t.Errorf("slots 1 and 2 running on a, slot 3 claimed on b and not created yet: %q, want no move until slot 3 runs", got)
	}

	// once b reports slot 3 running, the next slot moves
	cs = append(cs, running("b", 3, "new"))
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Reports: claimed, Nodes: ns, Now: t0})
	if got := summary(r); got != "2:-" {
		t.Errorf("slot 3 running on b: %q, want slot 2 (not ready) off a", got)
	}

	// a created container that has not started does not run either
	cs[2].Running, cs[2].Ready = false, false
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Reports: claimed, Nodes: ns, Now: t0})
	if got := summary(r); got != "" {
		t.Errorf("slot 3 created on b, not started: %q, want no move", got)
	}
}

// A node's clock may be ahead of the leader's: a ready container that
// started after the leader's clock reading serves (minReadySeconds 0) all
// the same, and taking it off costs availability. It used to count as not
// serving, so its move was not paced by maxUnavailable.
func TestAReadyContainerStartedAheadOfTheLeadersClockServes(t *testing.T) {
	as, cs := settled("new", "a", "a", "a")
	for i := range cs {
		cs[i].StartedAt = t0.Add(10 * time.Second) // a's clock is 10 s ahead
	}
	c := ctl(3)
	c.Selector = map[string]string{"zone": "b"}
	ns := nodes("a", "b")
	ns[1].Labels = map[string]string{"zone": "b"}
	r := Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if got := summary(r); got != "" {
		t.Errorf("3 ready on a, started 10 s ahead of the leader's clock: %q, want no move until they have been available for 5 s", got)
	}
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0.Add(15 * time.Second)})
	if got := summary(r); got != "3:-" {
		t.Errorf("15 s on: %q, want one slot off a", got)
	}
}

func TestADrainedSlotNoOtherNodeCanTakeStaysUnschedulable(t *testing.T) {
	as, cs := settled("new", "a", "a")
	c := ctl(2)
	c.Selector = map[string]string{"zone": "a"}
	ns := nodes("a", "b")
	ns[0].Labels = map[string]string{"zone": "a"}
	ns[0].Availability = api.NodeDrain
	r := Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if got := summary(r); got != "" {
		t.Errorf("changes = %q, want none: no other node matches", got)
	}
	if !slices.Equal(r.Unschedulable, []int{1, 2}) || !strings.Contains(r.Reason, "a: draining") {
		t.Errorf("unschedulable = %v (%q), want [1 2] naming a as draining", r.Unschedulable, r.Reason)
	}
}

func TestALabelChangeMovesASlotForTheLabelsAndASpecChangeForTheSelector(t *testing.T) {
	as, cs := settled("new", "a", "b")
	c := ctl(2)
	c.Selector = map[string]string{"zone": "b"}
	ns := nodes("a", "b", "c")
	ns[1].Labels = map[string]string{"zone": "b"}
	ns[2].Labels = map[string]string{"zone": "b"}
	r := Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if len(r.Moves) != 1 || r.Moves[0].Reason != MoveLabels {
		t.Errorf("moves = %+v, want slot 1 for its node's labels", r.Moves)
	}
	as[1] = at("a", "old")
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: ns, Now: t0})
	if len(r.Moves) != 1 || r.Moves[0].Reason != MoveSelector {
		t.Errorf("moves = %+v, want slot 1 for the selector", r.Moves)
	}
}

func TestASlotWhoseNameIsTakenOnTheOnlyNodeStillGoesForAnotherNumber(t *testing.T) {
	as, cs := settled("new", "a")
	r := Decide(Input{Controller: ctl(1), Assigned: as, Containers: cs, Nodes: nodes("a"), Now: t0,
		Blocked: map[int]map[string]bool{1: {"a": true}}})
	if got := summary(r); got != "1:-" || len(r.Unschedulable) != 0 {
		t.Errorf("changes = %q, unschedulable %v; want slot 1 off a (slot 2 takes its place once it is gone)", got, r.Unschedulable)
	}
}
