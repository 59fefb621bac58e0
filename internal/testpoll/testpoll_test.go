package testpoll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	Eventually(t, time.Second, func() error {
		if calls.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if got := calls.Load(); got != 3 {
		t.Errorf("cond called %d times, want 3", got)
	}
}

// recorder is a testing.TB that records a failure instead of failing.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

func TestUntilFailsNamingWhatItWaitedFor(t *testing.T) {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != r {
				t.Fatalf("Until did not fail: %v", p)
			}
		}()
		Until(r, 30*time.Millisecond, "the moon", func() bool { return false })
	}()
	if !strings.Contains(r.failed, "not after 30ms: still waiting for the moon") {
		t.Errorf("failure = %q", r.failed)
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Wait(ctx, time.Minute, func() error { return errors.New("never") }); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after its context ended: err = %v, want context.Canceled", err)
	}
}
