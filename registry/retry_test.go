package registry

import (
	"context"
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The one pacing of the managers' retry loops: the waits double over the
// failures in a row, start over after a try that went well, and a stop
// cuts a wait short.
func TestRetryDoublesStartsOverAndStopsWithItsContext(t *testing.T) {
	retry := NewRetryOf(func() wait.Backoff {
		return wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: math.MaxInt, Cap: 4 * time.Millisecond}
	})
	for i, want := range []struct {
		wentWell bool
		wait     time.Duration
	}{{false, 1}, {false, 2}, {false, 4}, {false, 4}, {true, 1}, {false, 2}} {
		if got := retry.Next(want.wentWell); got != want.wait*time.Millisecond {
			t.Errorf("wait %d (went well %v) = %s, want %dms", i+1, want.wentWell, got, want.wait)
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var said time.Duration
	if NewRetry().Sleep(ctx, time.Hour, func(d time.Duration) { said = d }) {
		t.Error("a wait of an hour went on after its context ended")
	}
	if said != time.Hour {
		t.Errorf("said retryIn %s, want the wait it cut short (1h)", said)
	}
}
