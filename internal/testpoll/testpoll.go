// Package testpoll is the one poll helper of the module's tests: it waits
// for a condition that other goroutines or processes bring about, with a
// deadline, instead of sleeping for a guessed time.
package testpoll

import (
	"context"
	"errors"
	"fmt"
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
	// not tb.Context(): a cleanup waits with Eventually too, after that
	// context has ended
	took, err := Wait(context.Background(), timeout, cond) //nolint:usetesting // see above
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return took
}

// Wait is Eventually for a program (cmd/rm-bench): it returns how long
// cond took to return nil, or, when timeout passes or ctx ends first, an
// error with cond's last.
func Wait(ctx context.Context, timeout time.Duration, cond func() error) (time.Duration, error) {
	start := time.Now()
	for interval := firstInterval; ; interval = min(2*interval, maxInterval) {
		err := cond()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return time.Since(start), fmt.Errorf("not after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), errors.Join(ctx.Err(), err)
		case <-time.After(interval):
		}
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
