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
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"
)

// errWatchCompacted means the watch start revision was compacted away: only
// a fresh list can tell what changed in between.
var errWatchCompacted = errors.New("watch: revision compacted")

// errWatchClosed means the watch channel closed without an error.
var errWatchClosed = errors.New("watch: channel closed")

// WatchControllers lists the specs, then follows the watch, until ctx ends
// (it then returns nil). While etcd is away it keeps trying, with a capped
// exponential backoff; it returns an error only when etcd refuses this
// manager for good (permission denied, authentication failed).
func (rm *ReplicationManager) WatchControllers(ctx context.Context) error {
	backoff := retryBackoff()
	ignored := make(map[string]bool) // keys warned about once
	for ctx.Err() == nil {
		rev, err := rm.relist(ctx, ignored)
		if err == nil {
			backoff = retryBackoff()
			err = rm.watch(ctx, rev+1, ignored)
		}
		if ctx.Err() != nil || Refused(err) {
			return unlessStopped(ctx, fmt.Errorf("watch controllers: %w", err))
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
			return nil
		case <-time.After(delay):
		}
	}
	return nil
}

// relist reads every spec at one revision into the cache and queues what
// changed. It returns the revision read at.
func (rm *ReplicationManager) relist(ctx context.Context, ignored map[string]bool) (int64, error) {
	specs, skipped, rev, err := rm.store.listControllers(ctx)
	if err != nil {
		return 0, err
	}
	for _, key := range skipped {
		rm.warnIgnored(ignored, key)
	}
	changed := rm.specs.replace(specs, rev)
	rm.later(changed...) // at start every controller, after a compaction those that changed
	rm.logger.Info("controllers listed", "count", len(specs), "revision", rev, "changed", len(changed))
	return rev, nil
}

// warnIgnored logs, once per key, that a key below the controllers prefix
// is not a controller.
func (rm *ReplicationManager) warnIgnored(ignored map[string]bool, key string) {
	if ignored[key] {
		return
	}
	ignored[key] = true
	rm.logger.Warn("key below the controllers prefix is not a controller (its id would hold a slash); ignored", "key", key)
}

// watch applies watch events from revision rev until the watch fails. It
// always returns a non-nil error saying why it stopped.
func (rm *ReplicationManager) watch(ctx context.Context, rev int64, ignored map[string]bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watch stream when we return
	for resp := range rm.store.WatchControllers(ctx, rev) {
		if resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted) {
			return fmt.Errorf("%w: wanted %d, oldest is %d", errWatchCompacted, rev, resp.CompactRevision)
		}
		if err := resp.Err(); err != nil {
			return err
		}
		for _, raw := range resp.Events {
			ev := rm.store.DecodeEvent(raw)
			if ev.Ignored {
				if raw.Type != clientv3.EventTypeDelete {
					rm.warnIgnored(ignored, ev.Key)
				}
				continue
			}
			rm.applyEvent(ev)
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
	old, existed, _ := rm.specs.get(ev.Spec.ID)
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
	if !ev.Deleted && existed && sameReplicas(old, ev.Spec) {
		rm.later(ev.Spec.ID) // a template or strategy change: a rollout, which can wait a moment
		return
	}
	rm.queue.Add(ev.Spec.ID) // a new controller, a scale, a delete
}

// sameReplicas reports whether two revisions of a spec ask for the same
// number of replicas.
func sameReplicas(a, b Spec) bool {
	return a.Controller != nil && b.Controller != nil &&
		a.Controller.DesiredState.Replicas == b.Controller.DesiredState.Replicas
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
