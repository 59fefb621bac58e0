package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// rolling is a controller of three slots on a, b and c that rolls back a
// failed rollout, rolling from template "old" (revision 10, completed) to
// "new": slot 1 runs a new container n1 that started 2 s ago, within its
// 5 s monitor window, which the leader watched; slots 2 and 3 run "old".
func rolling() Input {
	c := ctl(3)
	c.Rollback, c.ProgressDeadline, c.Number = true, time.Minute, 2
	as, cs := settled("old", "a", "b", "c")
	as[1] = at("a", "new")
	n1 := running("a", 1, "new")
	n1.ID, n1.StartedAt = "n1", t0.Add(-2*time.Second)
	cs[0] = n1
	return Input{Controller: c, Assigned: as, Containers: cs, Nodes: nodes("a", "b", "c"), Now: t0,
		Reports: map[string]Report{"a": {}, "b": {}, "c": {}},
		Rollout: api.RolloutRecord{CompletedRevision: 10, CompletedNumber: 1, CompletedHash: "old", TargetHash: "new"},
		Watched: map[string]Watched{"n1": {Slot: 1, Node: "a", Hash: "new", StartedAt: t0.Add(-2 * time.Second)}}}
}

// withoutContainer drops the container of that id from in's reports.
func withoutContainer(in Input, id string) Input {
	var cs []Container
	for _, c := range in.Containers {
		if c.ID != id {
			cs = append(cs, c)
		}
	}
	in.Containers = cs
	return in
}

func TestACompletedRolloutIsRecorded(t *testing.T) {
	c := ctl(3)
	c.Number = 4
	as, cs := settled("new", "a", "b", "c")
	r := Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: nodes("a", "b", "c"), Now: t0})
	if got := r.Rollout; got.CompletedHash != "new" || got.CompletedRevision != 20 || got.CompletedNumber != 4 {
		t.Errorf("record %+v, want revision 20 (number 4) of new completed", got)
	}
	// one of the three not available yet: not complete
	cs[2].StartedAt = t0.Add(-time.Second)
	r = Decide(Input{Controller: c, Assigned: as, Containers: cs, Nodes: nodes("a", "b", "c"), Now: t0})
	if r.Rollout.CompletedHash != "" {
		t.Errorf("record %+v with a container not available yet, want nothing completed", r.Rollout)
	}
}

func TestANewContainerWatchedThroughItsWindow(t *testing.T) {
	in := rolling()
	in.Watched = nil
	r := Decide(in)
	if w, ok := r.Watched["n1"]; !ok || w.Failed || w.Slot != 1 {
		t.Fatalf("watched %+v, want n1 of slot 1 watched", r.Watched)
	}
	if r.Rollout.Failures != 0 || r.Rollback != "" {
		t.Errorf("record %+v, step %q, want no failure", r.Rollout, r.Rollback)
	}
	if r.RecheckAfter != 3*time.Second {
		t.Errorf("recheck after %s, want 3s, when n1's window ends", r.RecheckAfter)
	}
}

func TestANewContainerThatExitsWithinItsWindowFailsTheRolloutAndRollsBack(t *testing.T) {
	in := withoutContainer(rolling(), "n1") // it exited: no longer reported live
	r := Decide(in)
	if r.Rollback != RollbackStarted {
		t.Fatalf("step %q, want %q (record %+v)", r.Rollback, RollbackStarted, r.Rollout)
	}
	rec := r.Rollout
	if rec.FailedHash != "new" || rec.FailedRevision != 20 || rec.FailedNumber != 2 || !rec.RollbackSince.Equal(t0) || rec.Reason == "" {
		t.Errorf("record %+v, want revision 20 (number 2) of new failed at t0 with a reason", rec)
	}
	if got := summary(r); got != "1:a/old" {
		t.Errorf("changes %s, want slot 1 back to old on a", got)
	}
	if c := r.Changes[0].New; c.Revision != 10 {
		t.Errorf("slot 1 gets revision %d, want 10, the completed one", c.Revision)
	}
}

func TestAFailureNeedsTheContainerWithinItsWindowAndWantedStill(t *testing.T) {
	// it ran past its window before it went: no failure
	in := withoutContainer(rolling(), "n1")
	in.Watched = nil
	if r := Decide(in); r.Rollout.Failures != 0 || r.Rollback != "" {
		t.Errorf("a container never seen within its window: record %+v, step %q, want no failure", r.Rollout, r.Rollback)
	}
	// the leader took its slot to another node: no failure
	in = withoutContainer(rolling(), "n1")
	in.Assigned[1] = at("b", "new")
	if r := Decide(in); r.Rollout.Failures != 0 {
		t.Errorf("a container whose slot moved: record %+v, want no failure", r.Rollout)
	}
	// its node is gone: no failure
	in = withoutContainer(rolling(), "n1")
	in.Nodes[0].Alive, in.Nodes[0].GoneSince = false, t0
	if r := Decide(in); r.Rollout.Failures != 0 {
		t.Errorf("a container of a gone node: record %+v, want no failure", r.Rollout)
	}
}

func TestANewContainerUnhealthyWithinItsWindowIsAFailure(t *testing.T) {
	in := rolling()
	in.Containers[0].Unhealthy, in.Containers[0].Ready = true, false
	r := Decide(in)
	if r.Rollout.FailedHash != "new" || !r.Watched["n1"].Failed {
		t.Fatalf("record %+v, watched %+v: want the rollout failed and n1 counted", r.Rollout, r.Watched)
	}
	// counted once: the next decision adds nothing
	in.Watched, in.Rollout = r.Watched, r.Rollout
	in.Rollout.FailedHash, in.Rollout.TargetHash, in.Rollout.Failures = "", "new", 1
	in.Controller.Rollback = false
	if r := Decide(in); r.Rollout.Failures != 1 {
		t.Errorf("failures %d after n1 was counted, want 1", r.Rollout.Failures)
	}
}

func TestFailuresWithinTheRatioDoNotFailTheRollout(t *testing.T) {
	in := withoutContainer(rolling(), "n1")
	in.Controller.MaxFailureRatio = 0.5 // 1.5 of 3
	r := Decide(in)
	if r.Rollout.Failures != 1 || r.Rollback != "" {
		t.Fatalf("record %+v, step %q: want 1 failure, within the ratio", r.Rollout, r.Rollback)
	}
	in.Rollout = r.Rollout
	in.Rollout.Failures = 1
	n1 := running("a", 1, "new")
	n1.ID, n1.StartedAt = "n1b", t0.Add(-time.Second)
	in.Containers = append(in.Containers, n1)
	in.Watched = map[string]Watched{"n1b": {Slot: 1, Node: "a", Hash: "new", StartedAt: n1.StartedAt}}
	in = withoutContainer(in, "n1b")
	if r := Decide(in); r.Rollback != RollbackStarted || !strings.HasPrefix(r.Rollout.Reason, "2 new container(s) failed") {
		t.Errorf("record %+v, step %q: want the second failure to fail the rollout", r.Rollout, r.Rollback)
	}
}

func TestPauseCountsFailuresAndDoesNotRollBack(t *testing.T) {
	in := withoutContainer(rolling(), "n1")
	in.Controller.Rollback = false
	r := Decide(in)
	if r.Rollback != "" || r.Rollout.FailedHash != "" || r.Rollout.Failures != 1 {
		t.Errorf("record %+v, step %q: want one failure counted, no rollback", r.Rollout, r.Rollback)
	}
	for _, c := range r.Changes {
		if c.New != nil && c.New.Hash == "old" {
			t.Errorf("change %s gives a slot the old template under failureAction pause", summary(r))
		}
	}
}

func TestAPassedProgressDeadlineFailsTheRollout(t *testing.T) {
	in := rolling()
	in.DeadlineExceeded = true
	if r := Decide(in); r.Rollback != RollbackStarted || r.Rollout.Reason != "progress deadline exceeded" {
		t.Errorf("record %+v, step %q: want a rollback for the deadline", r.Rollout, r.Rollback)
	}
	// without a completed template there is nothing to roll back to
	in.Rollout.CompletedHash = ""
	if r := Decide(in); r.Rollback != "" {
		t.Errorf("step %q without a completed template, want none", r.Rollback)
	}
}

// rolledBack is rolling() once the rollback has begun, at t0.
func rolledBack() Input {
	in := withoutContainer(rolling(), "n1")
	in.Watched = nil
	in.Rollout.FailedRevision, in.Rollout.FailedHash, in.Rollout.Reason = 20, "new", "failed"
	in.Rollout.RollbackSince, in.Rollout.TargetHash = t0, "old"
	return in
}

func TestARollbackKeepsTheBoundsAndDoesNotRollForward(t *testing.T) {
	// every slot on the failed template, running, none ready
	in := rolledBack()
	in.Assigned, in.Containers = settled("new", "a", "b", "c")
	for i := range in.Containers {
		in.Containers[i].Ready = false
	}
	r := Decide(in)
	if r.Steps != 1 {
		t.Errorf("%d slots rolled back at once (%s), want 1 within maxUnavailable 1", r.Steps, summary(r))
	}
	// all back on old and available: done, and nothing moves to new
	in = rolledBack()
	in.Assigned, in.Containers = settled("old", "a", "b", "c")
	in.Now = t0.Add(30 * time.Second)
	r = Decide(in)
	if len(r.Changes) != 0 {
		t.Errorf("changes %s once rolled back, want none: the failed template is not rolled forward", summary(r))
	}
	if r.Rollback != RollbackDone || !r.Rollout.RolledBack || r.Rollout.FailedHash != "new" {
		t.Errorf("record %+v, step %q: want rolled back, still naming the failed template", r.Rollout, r.Rollback)
	}
	// later, long past the deadline: still nothing
	in.Rollout, in.Now = r.Rollout, t0.Add(time.Hour)
	if r := Decide(in); len(r.Changes) != 0 || r.Rollback != "" || r.Rollout.RollbackFailed {
		t.Errorf("an hour later: changes %s, step %q, record %+v; want nothing", summary(r), r.Rollback, r.Rollout)
	}
}

func TestANewTemplateEndsTheRollback(t *testing.T) {
	in := rolledBack()
	in.Assigned, in.Containers = settled("old", "a", "b", "c")
	in.Controller.Hash, in.Controller.Revision = "newer", 30
	r := Decide(in)
	if r.Rollout.FailedHash != "" || r.Rollout.RolledBack {
		t.Errorf("record %+v, want the rollback forgotten", r.Rollout)
	}
	if r.Steps != 1 || r.Changes[0].New.Hash != "newer" {
		t.Errorf("changes %s, want one slot rolled to newer", summary(r))
	}
}

func TestARollbackThatFailsPausesAndNeverRollsBackAgain(t *testing.T) {
	in := rolledBack()
	in.Now = t0.Add(time.Minute) // the progress deadline, and slot 1 still not back
	r := Decide(in)
	if r.Rollback != RollbackFailed || !r.Rollout.RollbackFailed {
		t.Fatalf("record %+v, step %q, want the rollback failed", r.Rollout, r.Rollback)
	}
	if r.Steps != 0 {
		t.Errorf("changes %s after the rollback failed, want it paused", summary(r))
	}
	// restored containers failing: failed too, and then nothing more
	in = rolledBack()
	o := running("b", 2, "old")
	o.ID, o.StartedAt = "o2", t0.Add(-time.Second)
	in.Containers[0] = o
	in.Watched = map[string]Watched{"o2": {Slot: 2, Node: "b", Hash: "old", StartedAt: o.StartedAt}}
	in = withoutContainer(in, "o2")
	r = Decide(in)
	if r.Rollback != RollbackFailed {
		t.Fatalf("record %+v, step %q, want the rollback failed by a restored container's exit", r.Rollout, r.Rollback)
	}
	in.Rollout = r.Rollout
	in.Now = t0.Add(time.Hour)
	if r := Decide(in); r.Rollback != "" || r.Rollout.FailedHash != "new" || r.Steps != 0 {
		t.Errorf("after a failed rollback: step %q, record %+v, changes %s; want it held", r.Rollback, r.Rollout, summary(r))
	}
}

func TestACrashOfTheCompletedTemplateIsNoRolloutFailure(t *testing.T) {
	in := withoutContainer(rolling(), "n1")
	in.Assigned[1] = at("a", "old")
	in.Controller.Hash, in.Controller.Revision = "old", 10
	in.Watched = map[string]Watched{"n1": {Slot: 1, Node: "a", Hash: "old", StartedAt: t0.Add(-2 * time.Second)}}
	in.Rollout.TargetHash, in.Rollout.Failures = "old", 3
	r := Decide(in)
	if r.Rollout.Failures != 0 || r.Rollback != "" || len(r.Watched) != 0 {
		t.Errorf("record %+v, step %q, watched %v: want nothing counted while no rollout is under way", r.Rollout, r.Rollback, r.Watched)
	}
}
