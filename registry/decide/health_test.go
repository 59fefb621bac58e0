package decide

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// sick is a controller of three slots on a, b and c that replaces
// unhealthy tasks, with maxUnavailable unavailable, whose containers
// c1..c3 are unhealthy where unhealthy says.
func sick(unavailable int, unhealthy ...int) Input {
	c := ctl(3)
	c.Unavailable, c.ReplaceUnhealthy = unavailable, true
	as, cs := settled("new", "a", "b", "c")
	for i := range cs {
		cs[i].ID = fmt.Sprintf("c%d", cs[i].Slot)
		if slices.Contains(unhealthy, cs[i].Slot) {
			cs[i].Unhealthy, cs[i].Ready = true, false
		}
	}
	return Input{Controller: c, Assigned: as, Containers: cs, Nodes: nodes("a", "b", "c"), Now: t0}
}

// replaced renders the replacements as "slot:container".
func replaced(r Result) []string {
	var out []string
	for _, c := range r.Changes {
		if c.New != nil && c.New.Replace != "" && c.New.Replace != c.Old.Replace {
			out = append(out, fmt.Sprintf("%d:%s", c.Slot, c.New.Replace))
		}
	}
	return out
}

func TestAnUnhealthySlotIsReplacedOnItsNode(t *testing.T) {
	r := Decide(sick(1, 2))
	if got := replaced(r); !slices.Equal(got, []string{"2:c2"}) {
		t.Fatalf("replaced %v, want [2:c2]", got)
	}
	if r.Changes[0].New.Node != "b" || r.Changes[0].New.Hash != "new" {
		t.Errorf("the replacement is %+v, want slot 2 kept on b with its template", *r.Changes[0].New)
	}
	if !slices.Equal(r.Unhealthy, []int{2}) {
		t.Errorf("unhealthy %v, want [2]", r.Unhealthy)
	}
	if h := r.Health[2]; h.Replaced != 1 || !h.At.Equal(t0) || h.Sick != "c2" {
		t.Errorf("record %+v, want one replacement at t0 of c2", h)
	}
}

func TestIllHealthReplacementsAreBoundedByMaxUnavailable(t *testing.T) {
	for _, tt := range []struct{ unavailable, want int }{{0, 1}, {1, 1}, {2, 2}, {3, 3}} {
		r := Decide(sick(tt.unavailable, 1, 2, 3))
		if got := len(replaced(r)); got != tt.want {
			t.Errorf("maxUnavailable %d: %d replaced at once, want %d (%v)", tt.unavailable, got, tt.want, replaced(r))
		}
	}
}

func TestAReplacementInFlightHoldsTheNext(t *testing.T) {
	in := sick(1, 1, 2, 3)
	in.Assigned[1] = withReplace(in.Assigned[1], "c1")
	// b's node has removed c1 and not reported its successor yet
	in.Containers = slices.DeleteFunc(in.Containers, func(c Container) bool { return c.ID == "c1" })
	if got := replaced(Decide(in)); len(got) != 0 {
		t.Fatalf("replaced %v while slot 1 runs nothing, want none", got)
	}
	// its successor runs (not healthy yet): the next one goes
	succ := running("a", 1, "new")
	succ.ID, succ.Ready, succ.StartedAt = "c1b", false, t0
	in.Containers = append(in.Containers, succ)
	if got := replaced(Decide(in)); !slices.Equal(got, []string{"2:c2"}) {
		t.Fatalf("replaced %v once slot 1 runs again, want [2:c2]", got)
	}
}

func TestAStopFirstRolloutStepCountsAgainstTheReplacements(t *testing.T) {
	in := sick(1, 2)
	in.Controller.Hash, in.Controller.Revision = "newer", 30
	// slot 1's step to "newer" is in flight, stop first: nothing of it runs
	in.Assigned[1] = Assignment{Node: "a", Revision: 30, Hash: "newer", ModRev: 6}
	in.Containers = slices.DeleteFunc(in.Containers, func(c Container) bool { return c.Slot == 1 })
	for _, c := range replaced(Decide(in)) {
		t.Errorf("replaced %s with a rollout step in flight and maxUnavailable 1", c)
	}
}

func TestAnUnhealthySlotAgainWaitsOutTheBackoff(t *testing.T) {
	in := sick(1, 2)
	in.Containers[1].ID = "c2b" // the successor of an earlier replacement
	in.Health = map[int]Health{2: {Replaced: 1, At: t0.Add(-30 * time.Second), Sick: "c2", Since: t0.Add(-40 * time.Second)}}
	in.Assigned[2] = withReplace(in.Assigned[2], "c2")

	r := Decide(in)
	if got := replaced(r); len(got) != 0 {
		t.Fatalf("replaced %v at once, want a wait of 10s", got)
	}
	if r.RecheckAfter != 10*time.Second {
		t.Errorf("recheck after %s, want 10s", r.RecheckAfter)
	}
	if h := r.Health[2]; h.Sick != "c2b" || !h.Since.Equal(t0) {
		t.Errorf("record %+v, want c2b seen unhealthy since t0", h)
	}

	in.Health, in.Now = r.Health, t0.Add(9*time.Second)
	if got := replaced(Decide(in)); len(got) != 0 {
		t.Fatalf("replaced %v after 9s, want a wait of 10s", got)
	}
	in.Now = t0.Add(10 * time.Second)
	r = Decide(in)
	if got := replaced(r); !slices.Equal(got, []string{"2:c2b"}) {
		t.Fatalf("replaced %v after 10s, want [2:c2b]", got)
	}
	if h := r.Health[2]; h.Replaced != 2 {
		t.Errorf("record %+v, want two replacements in a row", h)
	}
}

func TestHealthBackoffDoublesUpToFiveMinutes(t *testing.T) {
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for n, w := range want {
		if got := HealthBackoff(n); got != w {
			t.Errorf("HealthBackoff(%d) = %s, want %s", n, got, w)
		}
	}
	if got := HealthBackoff(1000); got != 5*time.Minute {
		t.Errorf("HealthBackoff(1000) = %s, want 5m", got)
	}
}

func TestASlotHealthyLongAfterItsReplacementStartsItsBackoffOver(t *testing.T) {
	in := sick(1, 2)
	in.Health = map[int]Health{2: {Replaced: 6, At: t0.Add(-time.Hour), Sick: "old", Since: t0.Add(-time.Hour)}}
	if got := replaced(Decide(in)); !slices.Equal(got, []string{"2:c2"}) {
		t.Fatalf("replaced %v, want [2:c2] at once: the last replacement was an hour ago", got)
	}
}

func TestUnhealthySlotsAreKeptWithoutReplace(t *testing.T) {
	in := sick(1, 1, 2, 3)
	in.Controller.ReplaceUnhealthy = false
	r := Decide(in)
	if len(r.Changes) != 0 || len(r.Unhealthy) != 0 {
		t.Errorf("changes %v, unhealthy %v, want none: onUnhealthy is ignore", summary(r), r.Unhealthy)
	}
}

func TestAnOutdatedUnhealthySlotIsLeftToTheRollout(t *testing.T) {
	in := sick(1, 2)
	in.Controller.Hash, in.Controller.Revision = "newer", 30
	r := Decide(in)
	for _, c := range replaced(r) {
		t.Errorf("replaced %s for ill health: the rollout replaces it", c)
	}
	if r.Steps == 0 {
		t.Errorf("no rollout step: %s", summary(r))
	}
}

func withReplace(a Assignment, id string) Assignment {
	a.Replace = id
	return a
}

// A rollout stops a slot that is not available only while replicas -
// maxUnavailable others run: a slot whose sick container is being
// replaced does not run on. The property test drew this: three
// containers not ready yet, slot 1's replacement ordered, then a new
// template; stopping slot 3 as well left one running.
func TestARolloutStepWaitsForAReplacementInFlight(t *testing.T) {
	in := sick(1, 1)
	for i := range in.Containers {
		in.Containers[i].Ready, in.Containers[i].StartedAt = false, t0
	}
	in.Assigned[1] = withReplace(in.Assigned[1], "c1")
	in.Controller.Hash, in.Controller.Revision = "newer", 30
	r := Decide(in)
	for _, c := range r.Changes {
		if c.New != nil && c.New.Hash == "newer" && c.Slot != 1 {
			t.Errorf("slot %d steps to the new template while slot 1 is replaced and maxUnavailable is 1: %s", c.Slot, summary(r))
		}
	}
	if got := summary(r); !strings.Contains(got, "1:a/newer") {
		t.Errorf("changes %s, want slot 1 on the new template: its replacement takes nothing more down", got)
	}
}
