package registry

// This file is the leader's work queue of controller ids, with two lanes:
// changes (a spec, a report, an assignment, a node) go in the first, and
// the periodic pass over every controller in the second, which is served
// only when the first is empty, so that a change never waits behind the
// fleet. An id is in the queue at most once, and never handed to two
// workers at once: one marked while a worker has it is handed out again
// once the worker is done.

import (
	"context"
	"sync"
	"time"
)

type laneQueue struct {
	mu       sync.Mutex
	changes  []string
	periodic []string
	queued   map[string]bool
	// lane says which lane a queued id is in: true for changes.
	lane       map[string]bool
	processing map[string]bool
	// again are ids marked while a worker had them, and in which lane.
	again  map[string]bool
	wake   chan struct{}
	closed bool
}

func newLaneQueue() *laneQueue {
	return &laneQueue{queued: map[string]bool{}, lane: map[string]bool{}, processing: map[string]bool{},
		again: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// add puts ids in the lane of changes.
func (q *laneQueue) add(ids ...string) { q.put(true, ids) }

// later puts ids in the periodic lane, unless they are queued already.
func (q *laneQueue) later(ids ...string) { q.put(false, ids) }

func (q *laneQueue) put(change bool, ids []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		switch {
		case q.processing[id]:
			q.again[id] = q.again[id] || change
		case !q.queued[id]:
			q.queued[id], q.lane[id] = true, change
			if change {
				q.changes = append(q.changes, id)
			} else {
				q.periodic = append(q.periodic, id)
			}
		case change && !q.lane[id]:
			// promoted: its periodic entry is skipped when popped
			q.lane[id] = true
			q.changes = append(q.changes, id)
		}
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// after adds id to the lane of changes after d.
func (q *laneQueue) after(id string, d time.Duration) {
	time.AfterFunc(d, func() { q.add(id) })
}

// pop returns the next id, waiting for one; false once the queue is
// closed or ctx ends.
func (q *laneQueue) pop(ctx context.Context) (string, bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return "", false
		}
		if id, ok := q.takeLocked(); ok {
			q.mu.Unlock()
			return id, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", false
		case <-q.wake:
		}
	}
}

func (q *laneQueue) takeLocked() (string, bool) {
	for len(q.changes) > 0 || len(q.periodic) > 0 {
		var id string
		change := len(q.changes) > 0
		if change {
			id, q.changes = q.changes[0], q.changes[1:]
		} else {
			id, q.periodic = q.periodic[0], q.periodic[1:]
		}
		if !q.queued[id] || q.lane[id] != change {
			continue // taken from the other lane already
		}
		delete(q.queued, id)
		delete(q.lane, id)
		q.processing[id] = true
		if len(q.changes)+len(q.periodic) > 0 {
			select { // let another worker in
			case q.wake <- struct{}{}:
			default:
			}
		}
		return id, true
	}
	return "", false
}

// done hands id back after a worker's decision; an id marked meanwhile
// goes in again.
func (q *laneQueue) done(id string) {
	q.mu.Lock()
	delete(q.processing, id)
	change, again := q.again[id]
	delete(q.again, id)
	q.mu.Unlock()
	if again {
		q.put(change, []string{id})
	}
}

// close makes every pop return false.
func (q *laneQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
