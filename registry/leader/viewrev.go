package leader

// This file holds a decision back until the leader's view of the nodes
// is as new as the spec it is made from. Each prefix has a mirror of its
// own, and each mirror hands its changes to the loop apart from the
// others: a spec can reach the loop before a cordon, a drain or a label
// that etcd committed before it. A user who cordons a node and then
// applies a controller must find none of its slots placed there
// (docs/CONTRACT.md, Node maintenance), so a spec at revision R is
// decided once the loop has applied the nodes and their configs up to R:
// their changes, or etcd's word that there were none (a progress
// notification, which viewAsker asks for).

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// viewPrefixes are the prefixes a placement reads besides the spec.
func (s *ReplicationManager) viewPrefixes() []string {
	return []string{s.store.NodesPrefix(), s.store.NodeConfigPrefix()}
}

// viewAt records, on the loop, that prefix's changes up to rev are
// applied, and queues the controllers that waited for the view to reach
// their spec.
func (s *ReplicationManager) viewAt(prefix string, rev int64) {
	if rev <= s.viewRevs[prefix] {
		return
	}
	s.viewRevs[prefix] = rev
	view := s.viewRev()
	for id, want := range s.behind {
		if want <= view {
			delete(s.behind, id)
			s.mark(id)
		}
	}
}

// viewRev is the revision up to which the loop has applied every change
// of the nodes and of their configs (viewRevs holds both prefixes from
// the start, at 0).
func (s *ReplicationManager) viewRev() int64 {
	view := int64(math.MaxInt64)
	for _, rev := range s.viewRevs {
		view = min(view, rev)
	}
	return view
}

// behindView reports whether a spec of id at rev is newer than the view;
// if it is, id waits, undecided, until the view reaches rev (viewAt), and
// etcd is asked where the watches of the view are.
func (s *ReplicationManager) behindView(id string, rev int64) bool {
	if rev <= s.viewRev() {
		return false
	}
	s.behind[id] = rev
	s.viewAsk.want(rev)
	return true
}

// viewProgress is the mirror of a prefix of the view told the revision
// its watch has reached: the asker may stop, and the loop applies it.
func (s *ReplicationManager) viewProgress(prefix string) func(int64) {
	return func(rev int64) {
		s.viewAsk.poke()
		s.send(func() {
			s.viewAt(prefix, rev)
			s.answerWaiters()
		})
	}
}

// viewHanded is a mirror of the view having handed a change to the
// loop: CaughtUp's waiters and the asker look again.
func (s *ReplicationManager) viewHanded() {
	s.handed()
	s.viewAsk.poke()
}

// viewAsker asks etcd for progress notifications on the watches of the
// view's prefixes until their mirrors have handed the loop everything up
// to the newest revision wanted: a prefix without a change of its own
// would not learn that etcd has none. A new want is asked for at once; a
// request left unanswered (etcd drops one while a watch of the stream has
// not caught up) is asked again, later each time. It runs in a goroutine
// of its own while a want is not met.
type viewAsker struct {
	// ctx is the term's, set before the mirrors start: the asking ends
	// with it.
	ctx      context.Context
	prefixes []string
	// seen are the revisions the prefixes' mirrors have handed over
	// (mirrorFuncs.seen), in the order of prefixes.
	seen    []*atomic.Int64
	request func(ctx context.Context, prefix string) error
	timeout time.Duration

	wanted  atomic.Int64
	running atomic.Bool
	// moved wakes the goroutine: a want or a seen revision rose.
	moved chan struct{}
}

func newViewAsker(s *ReplicationManager) *viewAsker {
	a := &viewAsker{prefixes: s.viewPrefixes(), request: s.store.RequestProgress, timeout: s.opts.EtcdTimeout, moved: make(chan struct{}, 1)}
	for _, prefix := range a.prefixes {
		a.seen = append(a.seen, s.seen[prefix])
	}
	return a
}

// want asks for the view to reach rev, until the term ends.
func (a *viewAsker) want(rev int64) {
	for cur := a.wanted.Load(); rev > cur; cur = a.wanted.Load() {
		if a.wanted.CompareAndSwap(cur, rev) {
			break
		}
	}
	a.poke()
	if a.running.CompareAndSwap(false, true) {
		go a.run(a.ctx)
	}
}

// poke wakes the goroutine, if it waits.
func (a *viewAsker) poke() {
	select {
	case a.moved <- struct{}{}:
	default:
	}
}

// lagging returns the prefixes whose mirrors have not handed over rev.
func (a *viewAsker) lagging(rev int64) []string {
	var behind []string
	for i, prefix := range a.prefixes {
		if a.seen[i].Load() < rev {
			behind = append(behind, prefix)
		}
	}
	return behind
}

// run asks until every want is met, or ctx ends.
func (a *viewAsker) run(ctx context.Context) {
	every, asked := firstProgress, int64(0)
	retry := time.NewTimer(every)
	defer retry.Stop()
	for {
		wanted := a.wanted.Load()
		behind := a.lagging(wanted)
		if len(behind) == 0 {
			a.running.Store(false)
			// a want raised after the load finds running set, and starts
			// no goroutine: look once more
			if len(a.lagging(a.wanted.Load())) == 0 || !a.running.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		if wanted > asked {
			every, asked = firstProgress, wanted
			a.ask(ctx, behind)
			retry.Reset(every)
		}
		select {
		case <-a.moved:
		case <-retry.C:
			every = min(2*every, lastProgress)
			a.ask(ctx, a.lagging(a.wanted.Load()))
			retry.Reset(every)
		case <-ctx.Done():
			a.running.Store(false)
			return
		}
	}
}

// ask sends one progress request for each of prefixes.
func (a *viewAsker) ask(ctx context.Context, prefixes []string) {
	for _, prefix := range prefixes {
		reqCtx, cancel := context.WithTimeout(ctx, a.timeout)
		_ = a.request(reqCtx, prefix) // best effort: unanswered, it is asked again
		cancel()
	}
}
