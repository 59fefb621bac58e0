package agent

// This file is the queue's second lane. Work that can wait a moment (a
// resync's pass over every controller, the next step of a rollout, a
// template change) goes to the feeder, which hands it to the work queue a
// few at a time, as the workers drain it. Work that cannot (a new
// controller, a scale, a container that died, a delete) goes to the queue
// at once, and so waits behind about one controller of the second lane
// per idle worker, however many are waiting there.

import (
	"context"
	"sync"
)

// feeder holds the controllers waiting in the second lane, each once, in
// the order they came.
type feeder struct {
	mu      sync.Mutex
	pending []string
	waiting map[string]bool
	wake    chan struct{} // a coalesced signal: something was added
	empty   chan struct{} // closed while nothing is pending
}

func newFeeder() *feeder {
	f := &feeder{waiting: make(map[string]bool), wake: make(chan struct{}, 1), empty: make(chan struct{})}
	close(f.empty)
	return f
}

// add puts ids in the lane; an id already waiting keeps its place.
func (f *feeder) add(ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		if f.waiting[id] {
			continue
		}
		if len(f.pending) == 0 {
			f.empty = make(chan struct{})
		}
		f.waiting[id] = true
		f.pending = append(f.pending, id)
	}
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// pop takes the oldest id; false when none waits.
func (f *feeder) pop() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) == 0 {
		return "", false
	}
	id := f.pending[0]
	f.pending[0] = ""
	f.pending = f.pending[1:]
	delete(f.waiting, id)
	if len(f.pending) == 0 {
		f.pending = nil // let the backing array go
		close(f.empty)
	}
	return id, true
}

// drainedCh returns a channel closed once nothing is pending.
func (f *feeder) drainedCh() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.empty
}

// later puts id in the second lane, woken.
func (rm *Agent) later(ids ...string) {
	for _, id := range ids {
		rm.wakes.wake(id)
	}
	rm.background.add(ids...)
}

// backgroundBacklog is how many controllers of the second lane the queue
// may hold now: one for each idle worker, and one more, so that no worker
// waits for the feeder and urgent work passes them quickly.
func (rm *Agent) backgroundBacklog() int {
	return rm.opts.Workers - int(rm.busy.Load()) + 1
}

// feed hands the second lane to the queue until ctx ends, keeping at most
// backgroundBacklog of it queued.
func (rm *Agent) feed(ctx context.Context) {
	for {
		for rm.queue.Len() < rm.backgroundBacklog() {
			id, ok := rm.background.pop()
			if !ok {
				break
			}
			rm.queue.addFed(id)
		}
		select {
		case <-ctx.Done():
			return
		case <-rm.background.wake:
		case <-rm.drained:
		}
	}
}
