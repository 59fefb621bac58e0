package bench

// This file keeps the nodes part's count of the assignments, from the
// events of one watch on the assignments prefix: which node every slot
// is on, how many keys were created and how many writes there were in
// all, and when a goal was reached (so many keys created, or every slot
// of a dead node put on another node). The time of a goal is the time the
// watch response that reached it was received, not when a poller looked.
// It does no I/O; the watch is in nodes.go.

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// assignmentEvent is one event of the assignments watch: node is the new
// value of key, "" for a delete.
type assignmentEvent struct {
	key  string
	node string
}

// assignmentTally follows the assignments; safe for concurrent use.
type assignmentTally struct {
	mu sync.Mutex
	// nodeOf is the node of every assigned key.
	nodeOf map[string]string
	// creates counts puts of keys that did not exist, writes every put
	// and delete.
	creates, writes int

	// wantCreates, once set, is reached at createdAt; firstAt is when the
	// first key was created.
	wantCreates int
	createdAt   time.Time
	firstAt     time.Time

	// moving are the keys of the node being watched (from) that no put
	// has moved to another node yet; movedAt is when the last one moved,
	// movedWrites the writes from track until then.
	from        string
	moving      map[string]bool
	tracked     bool
	movedAt     time.Time
	writesFrom  int
	movedWrites int
}

func newAssignmentTally() *assignmentTally {
	return &assignmentTally{nodeOf: map[string]string{}}
}

// apply applies the events of one watch response, received at.
func (t *assignmentTally) apply(events []assignmentEvent, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range events {
		t.writes++
		if ev.node == "" {
			delete(t.nodeOf, ev.key)
			continue
		}
		if _, ok := t.nodeOf[ev.key]; !ok {
			t.creates++
			if t.firstAt.IsZero() {
				t.firstAt = at
			}
		}
		t.nodeOf[ev.key] = ev.node
		if t.moving[ev.key] && ev.node != t.from {
			delete(t.moving, ev.key)
		}
	}
	if t.wantCreates > 0 && t.createdAt.IsZero() && t.creates >= t.wantCreates {
		t.createdAt = at
	}
	if t.tracked && t.movedAt.IsZero() && len(t.moving) == 0 {
		t.movedAt = at
		t.movedWrites = t.writes - t.writesFrom
	}
}

// expectCreates sets the number of creates whose time createdAt reports.
func (t *assignmentTally) expectCreates(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.wantCreates = n
}

// created returns the creates so far, when the first was seen and when
// wantCreates was reached (zero until then).
func (t *assignmentTally) created() (n int, first, all time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.creates, t.firstAt, t.createdAt
}

// track starts watching the slots now on node and returns how many there
// are; moved says when every one of them was put on another node.
func (t *assignmentTally) track(node string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.from, t.moving, t.tracked, t.movedAt = node, map[string]bool{}, true, time.Time{}
	for key, n := range t.nodeOf {
		if n == node {
			t.moving[key] = true
		}
	}
	t.writesFrom = t.writes
	return len(t.moving)
}

// moved returns how many of the tracked slots have not moved yet, and,
// once none is left, when the last one moved and how many writes the
// prefix saw from track until then.
func (t *assignmentTally) moved() (left int, at time.Time, writes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.moving), t.movedAt, t.movedWrites
}

// writeCount is the puts and deletes so far.
func (t *assignmentTally) writeCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.writes
}

// perNode counts the assigned slots of every node.
func (t *assignmentTally) perNode() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for _, n := range t.nodeOf {
		out[n]++
	}
	return out
}

// busiest is the node with the most slots, the first by name among
// equals; "" when nothing is assigned.
func busiest(perNode map[string]int) string {
	best := ""
	for _, n := range slices.Sorted(maps.Keys(perNode)) {
		if best == "" || perNode[n] > perNode[best] {
			best = n
		}
	}
	return best
}

// spreadOf returns the fewest and most slots of the nodes, over names;
// a node in names with no slot counts 0.
func spreadOf(perNode map[string]int, names []string) (lo, hi int) {
	for i, n := range names {
		c := perNode[n]
		if i == 0 || c < lo {
			lo = c
		}
		if i == 0 || c > hi {
			hi = c
		}
	}
	return lo, hi
}
