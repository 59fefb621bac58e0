// Package testclock is a clock tests move by hand, for the leader's and
// the node's time (leader.Clock): its timers fire while Advance moves it
// past them, before Advance returns.
package testclock

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock is a clock tests move by hand.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

// timer is an AfterFunc (every 0) or a ticker of a Clock.
type timer struct {
	at      time.Time
	every   time.Duration
	f       func()
	ticks   chan time.Time
	stopped atomic.Bool
}

// New returns a clock at now.
func New(now time.Time) *Clock { return &Clock{now: now} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f once Advance has moved the clock d past now.
func (c *Clock) AfterFunc(d time.Duration, f func()) {
	c.add(d, &timer{f: f})
}

// NewTicker ticks every d of the clock's time until stop is called.
func (c *Clock) NewTicker(d time.Duration) (ticks <-chan time.Time, stop func()) {
	t := &timer{every: d, ticks: make(chan time.Time, 1)}
	c.add(d, t)
	return t.ticks, func() { t.stopped.Store(true) }
}

// add sets t to fire d from now.
func (c *Clock) add(d time.Duration, t *timer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.at = c.now.Add(d)
	c.timers = append(c.timers, t)
}

// Advance moves the clock by d, and fires the timers due meanwhile: the
// functions are called, the tickers tick (once, as time.Ticker drops the
// ticks nobody took).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []*timer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped.Load():
			continue
		case t.at.After(now):
		case t.every > 0:
			due = append(due, t)
			for !t.at.After(now) {
				t.at = t.at.Add(t.every)
			}
		default:
			due = append(due, t)
			continue
		}
		kept = append(kept, t)
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	c.mu.Unlock()
	for _, t := range due {
		if t.f != nil {
			t.f()
			continue
		}
		select {
		case t.ticks <- now:
		default:
		}
	}
}
