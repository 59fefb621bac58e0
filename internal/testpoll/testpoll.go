// Package testpoll is the one poll helper of the module's tests: it waits
// for a condition that other goroutines or processes bring about, with a
// deadline, instead of sleeping for a guessed time.
package testpoll

import (
	"errors"
	"testing"
	"time"
)

// A condition is checked after 10ms, then less and less often, up to every
// 100ms: quick for what is quick, and not a flood of calls to Docker or
// etcd for what takes seconds.
const (
	firstInterval = 10 * time.Millisecond
	maxInterval   = 100 * time.Millisecond
)

// Eventually calls cond until it returns nil, and returns how long that
// took. When timeout passes first, it fails tb with cond's last error.
func Eventually(tb testing.TB, timeout time.Duration, cond func() error) time.Duration {
	tb.Helper()
	start := time.Now()
	for interval := firstInterval; ; interval = min(2*interval, maxInterval) {
		err := cond()
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			tb.Fatalf("not after %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}

// Until is Eventually for a condition that has no error of its own: the
// failure names what was awaited.
func Until(tb testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	tb.Helper()
	return Eventually(tb, timeout, func() error {
		if cond() {
			return nil
		}
		return errors.New("still waiting for " + what)
	})
}
