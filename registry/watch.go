package registry

// This file keeps the spec cache in step with etcd: list the prefix at a
// revision, then watch from revision+1, and list again whenever the watch
// cannot go on (compaction, a closed channel, a lost leader). It does not
// sync anything itself: it only queues the controllers that changed.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"k8s.io/apimachinery/pkg/util/wait"
)

// errWatchCompacted means the watch start revision was compacted away: only
// a fresh list can tell what changed in between.
var errWatchCompacted = errors.New("watch: revision compacted")

// errWatchClosed means the watch channel closed without an error.
var errWatchClosed = errors.New("watch: channel closed")

// WatchControllers lists the specs, then follows the watch, until ctx ends.
// While etcd is away it keeps trying, with a capped exponential backoff.
func (rm *ReplicationManager) WatchControllers(ctx context.Context) {
	backoff := retryBackoff()
	for ctx.Err() == nil {
		rev, err := rm.relist(ctx)
		if err == nil {
			backoff = retryBackoff()
			err = rm.watch(ctx, rev+1)
		}
		if ctx.Err() != nil {
			return
		}
		reason := watchRestartReason(err)
		rm.metrics.watchRestarts.WithLabelValues(reason).Inc()
		delay := backoff.Step()
		if errors.Is(err, errWatchCompacted) {
			delay = 0 // nothing is wrong with etcd: relist at once
		}
		rm.logger.Warn("controller watch restarting", "reason", reason, "retryIn", delay, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// relist reads every spec at one revision into the cache and queues what
// changed. It returns the revision read at.
func (rm *ReplicationManager) relist(ctx context.Context) (int64, error) {
	specs, rev, err := rm.store.ListControllers(ctx)
	if err != nil {
		return 0, err
	}
	changed := rm.specs.replace(specs, rev)
	for _, id := range changed {
		rm.queue.Add(id)
	}
	rm.logger.Info("controllers listed", "count", len(specs), "revision", rev, "changed", len(changed))
	return rev, nil
}

// watch applies watch events from revision rev until the watch fails. It
// always returns a non-nil error saying why it stopped.
func (rm *ReplicationManager) watch(ctx context.Context, rev int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watch stream when we return
	for resp := range rm.store.WatchControllers(ctx, rev) {
		if resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted) {
			return fmt.Errorf("%w: wanted %d, oldest is %d", errWatchCompacted, rev, resp.CompactRevision)
		}
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			rm.applyEvent(rm.store.DecodeEvent(ev))
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errWatchClosed
}

// applyEvent records one watch event and queues its controller if the event
// is newer than what the cache holds.
func (rm *ReplicationManager) applyEvent(ev ControllerEvent) {
	var changed bool
	if ev.Deleted {
		changed = rm.specs.remove(ev.Spec.ID, ev.Spec.ModRevision)
	} else {
		changed = rm.specs.put(ev.Spec)
	}
	if !changed {
		rm.logger.Debug("stale controller event ignored", "controller", ev.Spec.ID, "revision", ev.Spec.ModRevision)
		return
	}
	rm.queue.Add(ev.Spec.ID)
}

func watchRestartReason(err error) string {
	switch {
	case errors.Is(err, errWatchCompacted):
		return "compacted"
	case errors.Is(err, errWatchClosed):
		return "closed"
	default:
		return "error"
	}
}

// retryBackoff is the delay between attempts to reach etcd: 100ms doubling
// to 5s, with jitter so that several managers do not retry in step.
func retryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: 5 * time.Second}
}
