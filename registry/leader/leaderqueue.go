package leader

// This file is the leader's work queue of controller ids, with three
// lanes served in order, a lane only when those before it are empty:
//
//  1. changes that may move a slot: a spec, an assignment, a node, a
//     recheck a decision asked for;
//  2. reports, which mostly change a status;
//  3. the periodic pass over every controller.
//
// So a change never waits behind the fleet, and while many controllers
// are being placed (a leader's first pass, a node gone), the reports that
// come back meanwhile wait, and a controller's ten reports make one
// decision and one status write instead of ten. When the first lane is
// empty, as it is almost always, a report is decided at once.
//
// An id is in the queue at most once, in the first lane it was put in,
// and never handed out twice at once: the loop has it from its decision
// until its write is answered, and one marked meanwhile is handed out
// again once the loop is done with it. The queue has a lock of its own:
// the timers of rechecks and retries put ids in from their goroutines.

import (
	"sync"
	"time"
)

// lane is a lane of the queue; a lower one is served first.
type lane int

const (
	laneChange lane = iota
	laneReport
	lanePeriodic
	lanes
)

type laneQueue struct {
	mu sync.Mutex
	// ids are the lanes' ids in order; an id queued in a lane before is
	// skipped where its entry is no longer its lane.
	ids [lanes][]string
	// queued are the queued ids and their lane.
	queued     map[string]lane
	processing map[string]bool
	// again are ids marked while handed out, and their lane.
	again map[string]lane
	// wake has a value once an id is put in.
	wake chan struct{}
	// clock runs the delays of after.
	clock Clock
	// wakes counts, by id, every put but the periodic lane's (calm.go).
	wakes map[string]uint64
}

func newLaneQueue(clock Clock) *laneQueue {
	return &laneQueue{queued: map[string]lane{}, processing: map[string]bool{},
		again: map[string]lane{}, wake: make(chan struct{}, 1), clock: clock, wakes: map[string]uint64{}}
}

// add puts ids in the lane of changes.
func (q *laneQueue) add(ids ...string) { q.put(laneChange, ids) }

// report puts ids in the lane of reports.
func (q *laneQueue) report(ids ...string) { q.put(laneReport, ids) }

// later puts ids in the periodic lane.
func (q *laneQueue) later(ids ...string) { q.put(lanePeriodic, ids) }

func (q *laneQueue) put(l lane, ids []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		if l != lanePeriodic {
			q.wakes[id]++
		}
		if q.processing[id] {
			if cur, ok := q.again[id]; !ok || l < cur {
				q.again[id] = l
			}
			continue
		}
		if cur, ok := q.queued[id]; !ok || l < cur {
			// promoted: its entry in the later lane is skipped when popped
			q.queued[id] = l
			q.ids[l] = append(q.ids[l], id)
		}
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// after adds id to the lane of changes after d.
func (q *laneQueue) after(id string, d time.Duration) {
	q.clock.AfterFunc(d, func() { q.add(id) })
}

// woken is how many times id was put in the queue but in the periodic
// lane.
func (q *laneQueue) woken(id string) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.wakes[id]
}

// forget drops id's count of wake-ups: it is gone.
func (q *laneQueue) forget(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.wakes, id)
}

// idle reports whether no id is queued, handed out or marked again.
func (q *laneQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queued) == 0 && len(q.processing) == 0 && len(q.again) == 0
}

// take returns the next id without waiting; false when none is queued
// (wake tells when one is put in).
func (q *laneQueue) take() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.takeLocked()
}

func (q *laneQueue) takeLocked() (string, bool) {
	for l := range lanes {
		for len(q.ids[l]) > 0 {
			id := q.ids[l][0]
			q.ids[l] = q.ids[l][1:]
			if cur, ok := q.queued[id]; !ok || cur != l {
				continue // taken from an earlier lane already
			}
			delete(q.queued, id)
			q.processing[id] = true
			return id, true
		}
	}
	return "", false
}

// done hands id back once its decision is over; an id marked meanwhile
// goes in again.
func (q *laneQueue) done(id string) {
	q.mu.Lock()
	delete(q.processing, id)
	l, again := q.again[id]
	delete(q.again, id)
	q.mu.Unlock()
	if again {
		q.put(l, []string{id})
	}
}
