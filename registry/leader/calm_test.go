package leader

import (
	"testing"
)

// leaderOfWeb is a listed leader, its loop the test's goroutine, with node
// a and a controller web of 0 replicas, never decided.
func leaderOfWeb(t *testing.T) *ReplicationManager {
	t.Helper()
	s := listedLeader(t)
	s.testPutSpec(t, "web", 0)
	s.testPutNode(t, "a")
	return s
}

// A decision that writes nothing and waits for nothing is calm: the
// periodic pass finds the controller unchanged without deciding again,
// until the loop takes in any event (a mirror's change, a write's answer)
// or the controller is woken by anything but the pass.
func TestACalmDecisionHoldsUntilAnEventOrAWakeUp(t *testing.T) {
	s := leaderOfWeb(t)

	op := s.decideController("web") // a new controller: its status and first template
	if op == nil {
		t.Fatal("no write decided for a new controller")
	}
	if s.unchanged("web", s.inputsOf("web")) {
		t.Fatal("a decision that writes is calm")
	}
	if err := s.written(op, writeResult{rev: 3}); err != nil {
		t.Fatal(err)
	}
	if op := s.decideController("web"); op != nil {
		t.Fatalf("a second decision writes %+v, want nothing", op.w)
	}
	if !s.unchanged("web", s.inputsOf("web")) {
		t.Fatal("a decision that wrote nothing and waits for nothing is not calm")
	}
	s.queue.later("web") // the periodic pass
	if !s.unchanged("web", s.inputsOf("web")) {
		t.Error("the periodic pass's own queueing ended the calm")
	}

	s.testPutNode(t, "b") // a change anywhere: a node may take or lose slots
	if s.unchanged("web", s.inputsOf("web")) {
		t.Error("calm after a node came: every mirror's change ends it")
	}
	if op := s.decideController("web"); op != nil || !s.unchanged("web", s.inputsOf("web")) {
		t.Fatalf("no calm decision after the node came")
	}
	s.queue.add("web") // a wake-up: a timer, a report, a change of its own
	if s.unchanged("web", s.inputsOf("web")) {
		t.Error("calm after a wake-up")
	}
}

// The periodic pass does not queue a controller it would find unchanged:
// a fleet where nothing changed costs the loop no decision and the queue
// nothing.
func TestThePeriodicPassQueuesOnlyControllersThatAreNotCalm(t *testing.T) {
	s := leaderOfWeb(t)
	for id, ok := s.queue.take(); ok; id, ok = s.queue.take() {
		s.queue.done(id)
	}
	s.synchronize()
	if l, ok := queuedIn(s, "web"); !ok || l != lanePeriodic {
		t.Fatalf("a controller never decided: queued %v in lane %d, want the periodic lane", ok, l)
	}
	id, _ := s.queue.take()
	if op := s.decideController(id); op == nil {
		t.Fatal("no write decided for a new controller")
	} else if err := s.written(op, writeResult{rev: 3}); err != nil {
		t.Fatal(err)
	}
	s.queue.done(id)
	if op := s.decideController("web"); op != nil {
		t.Fatalf("a second decision writes %+v, want nothing", op.w)
	}

	s.synchronize()
	if l, ok := queuedIn(s, "web"); ok {
		t.Errorf("the pass queued a calm controller in lane %d", l)
	}
	s.testPutNode(t, "b") // a change anywhere ends the calm
	s.synchronize()
	if _, ok := queuedIn(s, "web"); !ok {
		t.Error("the pass did not queue the controller after a node came")
	}
}
