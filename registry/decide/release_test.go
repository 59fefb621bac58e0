package decide

import "testing"

// make prop (1,000,000 histories, seed 12659269569458622445): a slot taken
// off its node while its start-first step was in flight counted only the
// container its node reported, not the successor the step may have
// started, and another start-first step went over replicas + maxSurge
// (5 live against 4). What the taken assignment may have started counts
// until its node reports the slot gone, in the decision that takes it and
// in those after, while its release is held.
func TestASlotTakenOffItsNodeCountsWhatItsStartFirstStepMayHaveStarted(t *testing.T) {
	step := at("a", "new")
	step.StartFirst = true
	in := Input{Controller: ctl(2), Assigned: map[int]Assignment{1: step}, Nodes: nodes("a", "b"), Now: t0,
		Containers: []Container{running("a", 1, "old")}, // the successor is not reported yet
		Reports:    map[string]Report{"a": {Slots: NewSlotSet(1)}}}

	d := newDecision(in)
	d.set(1, nil)
	if got := d.liveCount(); got != 2 {
		t.Errorf("taken by this decision: %d live counted, want 2 (the old container and its successor)", got)
	}

	in.Assigned = map[int]Assignment{}
	in.Released = map[int]Release{1: ReleaseOf(step, 9)}
	in.ReportsRevision = 8
	if got := newDecision(in).liveCount(); got != 2 {
		t.Errorf("released at 9, reports as of 8: %d live counted, want 2", got)
	}
	// reports as of the release say only that the node wrote none since:
	// while its report holds the slot, what the step started may run
	// (make prop, seed 14811533018944992633, before its new leader: 3 live
	// against 2)
	in.ReportsRevision = 9
	if got := newDecision(in).liveCount(); got != 2 {
		t.Errorf("reports as of the release, a's report holding the slot: %d live counted, want 2", got)
	}
	in.Reports, in.Containers = map[string]Report{"a": {Slots: NewSlotSet()}}, nil
	if got := newDecision(in).liveCount(); got != 0 {
		t.Errorf("a's report let the slot go: %d live counted, want 0", got)
	}
}

// make prop (seed 14811533018944992633): a new leader remembers no
// release. Node a's report holds slot 1, which its start-first step was
// taken off, and lists the outdated container, not yet the successor: the
// report's startedFirst, written before the successor's create, is what
// says the node may run two.
func TestANewLeaderCountsTheSuccessorANodeReportsStartedFirst(t *testing.T) {
	old := running("a", 1, "old")
	old.Named = false // renamed out for its successor
	in := Input{Controller: ctl(2), Assigned: map[int]Assignment{}, Nodes: nodes("a", "b"), Now: t0, ReportsRevision: 9,
		Containers: []Container{old}, Reports: map[string]Report{"a": {Slots: NewSlotSet(1), StartedFirst: NewSlotSet(1)}}}
	if got := newDecision(in).liveCount(); got != 2 {
		t.Errorf("a's report says it started slot 1's successor first: %d live counted, want 2", got)
	}
	if r := Decide(in); len(r.Changes) > 0 {
		t.Errorf("with 2 live against replicas 2, the decision placed a slot: %s", summary(r))
	}

	in.Assigned = map[int]Assignment{1: at("a", "new")} // rewritten stop-first, no count carried
	if got := newDecision(in).liveCount(); got != 2 {
		t.Errorf("slot 1 assigned to a again: %d live counted, want 2", got)
	}
}
