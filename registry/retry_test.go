package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A try of the script below: how it ends and how long it lasts.
type scriptedTry struct {
	up     bool
	lasted time.Duration
	err    error
}

// runScript runs tries on a Retry of 1ms doubling to 8ms, on a clock that
// moves only by each try's lasted, and returns the waits it told Failed
// of and Do's error.
func runScript(ctx context.Context, tries []scriptedTry) ([]time.Duration, error) {
	clock := time.Unix(0, 0)
	var waits []time.Duration
	r := Retry{
		Delays: func() wait.Backoff {
			return wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: math.MaxInt, Cap: 8 * time.Millisecond}
		},
		Failed: func(_ error, retryIn time.Duration) { waits = append(waits, retryIn) },
		now:    func() time.Time { return clock },
	}
	n := 0
	err := r.Do(ctx, func() (bool, error) {
		if n == len(tries) {
			return false, nil // the script is over: a success ends the loop
		}
		try := tries[n]
		n++
		clock = clock.Add(try.lasted)
		return try.up, try.err
	})
	return waits, err
}

// The one reset rule: the waits double over the failed tries in a row and
// start over after a try that went well, one that got going or that lasted
// the longest wait; a try a little shorter continues the streak.
func TestRetryStartsOverAfterATryThatGotGoingOrLastedTheLongestWait(t *testing.T) {
	failed := errors.New("etcd away")
	waits, err := runScript(t.Context(), []scriptedTry{
		{err: failed}, {err: failed}, {err: failed}, {err: failed}, {err: failed}, // 1 2 4 8 8
		{up: true, err: failed}, {err: failed}, // got going: 1, then 2
		{lasted: 8 * time.Millisecond, err: failed}, // lasted the cap: 1
		{lasted: 7 * time.Millisecond, err: failed}, // shorter: 2
		{lasted: time.Hour},                         // success ends the loop
	})
	if err != nil {
		t.Fatalf("Do = %v, want nil after a try that succeeded", err)
	}
	want := []time.Duration{1, 2, 4, 8, 8, 1, 2, 1, 2}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(waits, want) {
		t.Errorf("waits = %v, want %v", waits, want)
	}
}

// An error that retrying cannot fix (etcd refusing the manager's
// credentials) ends the loop at once, returned as it is and not reported
// as a failure to retry.
func TestRetryEndsWhenEtcdRefusesForGood(t *testing.T) {
	refused := fmt.Errorf("watch: %w", rpctypes.ErrPermissionDenied)
	waits, err := runScript(t.Context(), []scriptedTry{{err: errors.New("blip")}, {err: refused}})
	if !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("Do = %v, want %v", err, refused)
	}
	if len(waits) != 1 {
		t.Errorf("%d failures reported, want 1: the blip, not the refusal", len(waits))
	}
}

// A stop cuts a wait short, and a try a stop cut short is no failure: Do
// returns the context's error and reports nothing.
func TestRetryStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var reported []error
	began := time.Now()
	err := Retry{
		Delays: func() wait.Backoff { return wait.Backoff{Duration: time.Hour, Steps: 1} },
		Failed: func(err error, _ time.Duration) { reported = append(reported, err); cancel() },
	}.Do(ctx, func() (bool, error) { return false, errors.New("docker away") })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want context.Canceled", err)
	}
	if took := time.Since(began); took > time.Minute {
		t.Errorf("Do took %s: the stop did not cut the hour's wait short", took)
	}
	if len(reported) != 1 {
		t.Errorf("reported %v, want the one failure before the stop", reported)
	}

	reported = nil
	err = Retry{Failed: func(err error, _ time.Duration) { reported = append(reported, err) }}.Do(ctx, func() (bool, error) {
		return false, ctx.Err() // a try under way when the stop came
	})
	if !errors.Is(err, context.Canceled) || len(reported) != 0 {
		t.Errorf("a try cut short by the stop: Do = %v, reported %v; want context.Canceled, nothing", err, reported)
	}
}
