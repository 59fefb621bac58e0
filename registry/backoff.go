package registry

import (
	"sync"
	"time"
)

// stepBackoff is a per-controller delay that doubles on every failure, from
// initial up to max, and is cleared by a success. The manager keeps two: one
// for failing creates (a missing image, a refusing daemon), one for
// containers that crash soon after they start.
type stepBackoff struct {
	initial, max time.Duration

	mu      sync.Mutex
	entries map[string]backoffEntry
}

type backoffEntry struct {
	delay time.Duration
	until time.Time
	steps int
}

func newStepBackoff(initial, max time.Duration) *stepBackoff {
	return &stepBackoff{initial: initial, max: max, entries: make(map[string]backoffEntry)}
}

// fail records a failure at time at and returns the new delay.
func (b *stepBackoff) fail(id string, at time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[id]
	if e.delay == 0 {
		e.delay = b.initial
	} else {
		e.delay = min(e.delay*2, b.max)
	}
	e.steps++
	e.until = at.Add(e.delay)
	b.entries[id] = e
	return e.delay
}

// wait returns how long id must still wait at time now; 0 means go.
func (b *stepBackoff) wait(id string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	if !ok || !now.Before(e.until) {
		return 0
	}
	return e.until.Sub(now)
}

// steps returns how many failures id has had since its last reset.
func (b *stepBackoff) steps(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entries[id].steps
}

// reset clears id's delay.
func (b *stepBackoff) reset(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, id)
}
