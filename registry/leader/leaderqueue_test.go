package leader

import (
	"slices"
	"testing"
)

// popAll takes what the queue holds now, handing each id back at once.
func popAll(t *testing.T, q *laneQueue) []string {
	t.Helper()
	var out []string
	for {
		id, ok := q.take()
		if !ok {
			return out
		}
		out = append(out, id)
		q.done(id)
	}
}

func TestLaneQueueServesChangesThenReportsThenThePeriodicPass(t *testing.T) {
	q := newLaneQueue(wallClock{})
	q.later("p1", "p2")
	q.report("r1", "r2")
	q.add("c1")
	q.report("r3")
	q.add("c2")
	got := popAll(t, q)
	want := []string{"c1", "c2", "r1", "r2", "r3", "p1", "p2"}
	if !slices.Equal(got, want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

func TestLaneQueueHoldsAnIDOnceInItsFirstLane(t *testing.T) {
	q := newLaneQueue(wallClock{})
	q.later("a", "b")
	q.report("a")
	q.add("b")
	q.report("b") // already in the lane of changes: stays there
	got := popAll(t, q)
	if want := []string{"b", "a"}; !slices.Equal(got, want) {
		t.Errorf("popped %v, want %v (each once, promoted)", got, want)
	}
}

func TestLaneQueueHandsAnIDMarkedWhileTheLoopHasItOutAgainAfter(t *testing.T) {
	q := newLaneQueue(wallClock{})
	q.later("a")
	id, ok := q.take()
	if !ok || id != "a" {
		t.Fatalf("take = %q, %v", id, ok)
	}
	q.report("a")
	q.add("a") // the best lane wins
	q.later("b")
	if id, _ := q.take(); id != "b" {
		t.Fatalf("take while the loop has a = %q, want b", id)
	}
	q.done("b")
	q.later("c")
	q.done("a")
	if got, want := popAll(t, q), []string{"a", "c"}; !slices.Equal(got, want) {
		t.Errorf("popped %v, want %v: a back in the lane of changes, before c", got, want)
	}
}
