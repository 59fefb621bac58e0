package registry

// This file is the one way the managers wait for etcd: a capped,
// jittered exponential backoff between tries, and the errors that end the
// trying (a refusal for good) or explain a watch restart.

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

// Retry paces a loop that keeps trying to reach etcd or Docker: a
// backoff between failed tries (RetryBackoff unless the loop has a
// schedule of its own), started over once a try has gone well. Every such
// loop of the managers (RetryEtcd, Mirror, the Docker event stream, the
// wait for Docker at start, the elections) uses it, so that they all back
// off, say so and recover alike.
type Retry struct {
	schedule func() wait.Backoff
	backoff  wait.Backoff
}

// NewRetry returns the pacing of a loop that has not failed yet, on
// RetryBackoff.
func NewRetry() *Retry { return NewRetryOf(func() wait.Backoff { return *RetryBackoff() }) }

// NewRetryOf returns the pacing of a loop on the waits of schedule.
func NewRetryOf(schedule func() wait.Backoff) *Retry {
	return &Retry{schedule: schedule, backoff: schedule()}
}

// WentWell starts the backoff over: the last try went well (a list that
// answered, a stream that ran for a while, a term led).
func (r *Retry) WentWell() { r.backoff = r.schedule() }

// Next returns the wait after a try: the next step of the backoff, which
// starts over first when the try went well.
func (r *Retry) Next(wentWell bool) time.Duration {
	if wentWell {
		r.WentWell()
	}
	return r.backoff.Step()
}

// Wait waits the next delay after a failed try, reported first through
// say, and returns false when ctx ends before it is over.
func (r *Retry) Wait(ctx context.Context, say func(retryIn time.Duration)) bool {
	return r.Sleep(ctx, r.Next(false), say)
}

// Sleep waits delay, reported first through say, and returns false when
// ctx ends before it is over.
func (r *Retry) Sleep(ctx context.Context, delay time.Duration, say func(retryIn time.Duration)) bool {
	say(delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// RetryEtcd calls read until it succeeds, with RetryBackoff between
// tries, each failure logged as msg. It returns ctx's error when ctx ends
// first, and an error etcd refuses this manager with (Refused) at once.
func RetryEtcd(ctx context.Context, logger *slog.Logger, msg string, read func() error) error {
	retry := NewRetry()
	for {
		err := read()
		switch {
		case err == nil:
			return nil
		case Refused(err):
			return err
		}
		if !retry.Wait(ctx, func(delay time.Duration) { logger.Warn(msg, "retryIn", delay, "err", err) }) {
			return ctx.Err()
		}
	}
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
