package leader

// This file is whether the leader has caught up with etcd: every change
// up to a revision in its mirrors, every controller queued decided, and
// every write answered. A caller that changed etcd learns so when the
// leader has acted on the change, and the tests of a whole cluster take
// their steps at those points.

import (
	"context"
	"errors"
)

// ErrStopped is CaughtUp's answer once the leader's loop has ended.
var ErrStopped = errors.New("the leader's loop has ended")

// caughtUpWaiter is a CaughtUp call waiting for the loop to reach rev.
type caughtUpWaiter struct {
	rev  int64
	done chan struct{}
}

// CaughtUp returns nil once the leader has applied every change etcd
// held when it was called, and its own writes' echoes, decided every
// controller those changes queued, and had every write answered: what it
// would decide from etcd as it was, it has. It waits for Run to start,
// and returns ErrStopped once the loop has ended, ctx's error once ctx
// does. A recheck or a retry the leader has put off for later is not
// waited for.
func (s *ReplicationManager) CaughtUp(ctx context.Context) error {
	rev, err := s.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	return s.waitFor(ctx, rev)
}

// waitFor returns once the loop has everything up to rev and nothing to
// do. Meanwhile etcd is asked to tell the watches where they are
// (caughtUpAsk), up to rev and up to the leader's own writes, which
// raise the want as they are answered (wrote).
func (s *ReplicationManager) waitFor(ctx context.Context, rev int64) error {
	w := caughtUpWaiter{rev: rev, done: make(chan struct{})}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	if !s.onLoop(func() { s.waiters = append(s.waiters, w) }) {
		return ErrStopped
	}
	s.caughtUpAsk.want(max(rev, s.wroteRev.Load()))
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.mailbox.done:
		return ErrStopped
	}
}

// handed wakes the loop, while a CaughtUp call waits, after a mirror
// handed it a change: the loop may have found the change applied but
// seen not raised yet, and gone to wait.
func (s *ReplicationManager) handed() {
	if s.waiting.Load() > 0 {
		s.send(s.answerWaiters)
	}
}

// progressed wakes the loop after a mirror was told the revision its
// watch reached: a waiter may be answered now.
func (s *ReplicationManager) progressed(int64) { s.send(s.answerWaiters) }

// answerWaiters answers, on the loop while it has nothing to do, the
// CaughtUp calls whose revision every mirror has handed to the loop.
func (s *ReplicationManager) answerWaiters() {
	if len(s.waiters) == 0 || !s.settled() {
		return
	}
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if s.caughtUpTo(w.rev) {
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	clear(s.waiters[len(kept):])
	s.waiters = kept
}

// settled reports whether the loop has nothing to do: every prefix
// listed, nothing queued, no write in flight, no decision waiting for the
// view.
func (s *ReplicationManager) settled() bool {
	if !s.ready() || len(s.inflight) > 0 || !s.queue.idle() || len(s.behind) > 0 {
		return false
	}
	for _, g := range s.gone {
		if g.busy {
			return false
		}
	}
	return true
}

// wrote records the revisions a decision's write went in at: a waiter
// waits for their echoes too.
func (s *ReplicationManager) wrote(r writeResult) {
	newest := max(s.wroteRev.Load(), r.rev, r.bound)
	for _, rev := range r.revs {
		newest = max(newest, rev)
	}
	s.wroteRev.Store(newest) // the loop's alone to write
	if s.waiting.Load() > 0 {
		s.caughtUpAsk.want(newest)
	}
}

// caughtUpTo reports whether the loop has applied every change up to rev,
// and up to the leader's own writes, of every prefix: each mirror handed
// it over, and nothing waits in the mailbox (the seen revisions read
// first: a change handed over before them is applied once the mailbox is
// empty).
func (s *ReplicationManager) caughtUpTo(rev int64) bool {
	rev = max(rev, s.wroteRev.Load())
	for _, seen := range s.seen {
		if seen.Load() < rev {
			return false
		}
	}
	return len(s.mailbox.events) == 0
}
