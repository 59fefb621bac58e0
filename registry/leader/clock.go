package leader

// This file is the leader's time: when it is, and what it does later (a
// recheck a decision asked for, the periodic pass, the end of a node's
// grace). The daemon runs on the wall clock; a test moves a clock of its
// own, and the timers with it.

import "time"

// Clock is the time a ReplicationManager runs on.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed, from a goroutine other than
	// the caller's; f must not block.
	AfterFunc(d time.Duration, f func())
	// NewTicker ticks every d until stop is called; like time.Ticker's, a
	// tick nobody took is dropped.
	NewTicker(d time.Duration) (ticks <-chan time.Time, stop func())
}

// wallClock is the real time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }

func (wallClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
