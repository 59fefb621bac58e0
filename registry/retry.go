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

// RetryEtcd calls read until it succeeds, with RetryBackoff between
// tries, each failure logged as msg. It returns ctx's error when ctx ends
// first, and an error etcd refuses this manager with (Refused) at once.
func RetryEtcd(ctx context.Context, logger *slog.Logger, msg string, read func() error) error {
	backoff := RetryBackoff()
	for {
		err := read()
		switch {
		case err == nil:
			return nil
		case Refused(err):
			return err
		}
		delay := backoff.Step()
		logger.Warn(msg, "retryIn", delay, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
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
