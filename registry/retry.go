package registry

// This file is the one way the managers keep trying etcd or Docker: a
// loop of tries with a capped, jittered exponential backoff between failed
// ones and one rule for when the backoff starts over, and the errors that
// end the trying (a refusal for good) or explain a watch restart.

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"k8s.io/apimachinery/pkg/util/wait"
)

// UnlessStopped returns err, or nil when ctx has ended: what a stop cuts
// short is not a failure.
func UnlessStopped(ctx context.Context, err error) error {
	select {
	case <-ctx.Done():
		return nil
	default:
		return err
	}
}

// Retry is a loop that keeps trying to reach etcd or Docker. Every such
// loop of the managers runs on it (RetryEtcd, Mirror, the Docker event
// stream, the wait for Docker at start, the elections), so that they all
// back off, say so, stop and recover alike.
//
// Do calls try until try returns nil, an error that ends the trying
// (Refused: etcd refusing this manager for good), or ctx ends. After each other
// error it tells Failed and waits the next delay of Delays.
//
// The one rule for when the delays start over: after a try that went well.
// A try went well when it got going (it returned up: a list answered, an
// election was won) or when it lasted at least the longest delay
// (Delays' Cap): a loop whose tries last that long cannot spin, however
// its tries end. Any other failed try continues the streak, and its delay
// is the next step of the backoff.
type Retry struct {
	// Delays returns the delays of a failure streak, the first one first;
	// nil means RetryBackoff. Without a Cap, no try lasts long enough to
	// start the delays over.
	Delays func() wait.Backoff
	// Failed, when not nil, is told of every failed try that Do retries,
	// with the wait before the next one. A try cut short by ctx's end is
	// not a failure, and neither is an error that ends the trying.
	Failed func(err error, retryIn time.Duration)

	now func() time.Time // time.Now; tests move it
}

// Do runs the loop (see Retry). It returns nil once try succeeds, the
// error that ended the trying, or ctx's error when ctx ends first.
func (r Retry) Do(ctx context.Context, try func() (up bool, err error)) error {
	delays := r.Delays
	if delays == nil {
		delays = func() wait.Backoff { return *RetryBackoff() }
	}
	now := r.now
	if now == nil {
		now = time.Now
	}
	backoff := delays()
	for {
		began := now()
		up, err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if Refused(err) {
			return err
		}
		if up || (backoff.Cap > 0 && now().Sub(began) >= backoff.Cap) {
			backoff = delays()
		}
		delay := backoff.Step()
		if r.Failed != nil {
			r.Failed(err, delay)
		}
		if !sleep(ctx, delay) {
			return ctx.Err()
		}
	}
}

// sleep waits delay, and returns false when ctx ends before it is over.
func sleep(ctx context.Context, delay time.Duration) bool {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// RetryEtcd calls read until it succeeds, on a Retry with RetryBackoff,
// each failure logged as msg. It returns ctx's error when ctx ends first,
// and an error etcd refuses this manager with (Refused) at once.
func RetryEtcd(ctx context.Context, logger *slog.Logger, msg string, read func() error) error {
	return Retry{Failed: func(err error, delay time.Duration) {
		logger.Warn(msg, "retryIn", delay, "err", err)
	}}.Do(ctx, func() (bool, error) { return false, read() })
}

// Refused reports whether err is etcd refusing the manager for good
// (permission denied, authentication failed): retrying cannot fix it, so
// Run returns it, and so should whoever runs Run.
func Refused(err error) bool {
	return errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrAuthFailed)
}

// ErrWatchCompacted means the watch start revision was compacted away: only
// a fresh list can tell what changed in between.
var ErrWatchCompacted = errors.New("watch: revision compacted")

// ErrWatchClosed means the watch channel closed without an error.
var ErrWatchClosed = errors.New("watch: channel closed")

func WatchRestartReason(err error) string {
	switch {
	case errors.Is(err, ErrWatchCompacted):
		return "compacted"
	case errors.Is(err, ErrWatchClosed):
		return "closed"
	default:
		return "error"
	}
}

// RetryBackoff is the delay between attempts to reach etcd: 100ms doubling
// to 5s, with jitter so that several managers do not retry in step.
func RetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: math.MaxInt, Cap: 5 * time.Second}
}
