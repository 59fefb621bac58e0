package leader

// This file asks etcd where the leader's watches are, for as long as a
// decision waits for a mirror to reach a revision.

import (
	"context"
	"sync/atomic"
	"time"
)

// The delays before an unanswered progress request is asked again.
const (
	firstProgress = time.Millisecond
	lastProgress  = 50 * time.Millisecond
)

// progressAsker asks etcd for progress notifications on the watches of
// some prefixes until their mirrors have handed the loop everything up to
// the newest revision wanted: a prefix without a change of its own would
// not learn that etcd has none. A new want is asked for at once; a
// request left unanswered (etcd drops one while a watch of the stream has
// not caught up) is asked again, first after firstProgress, then twice
// as long each time up to lastProgress. It runs in a goroutine of its own
// while a want is not met. The leader has three: one for the nodes and
// their configs (viewrev.go), one for the reports, which slots taken off
// a node wait for (leadersync.go), and one for every prefix, which
// CaughtUp calls wait for (caughtup.go).
type progressAsker struct {
	// ctx is the term's, set before the mirrors start: the asking ends
	// with it.
	ctx      context.Context
	prefixes []string
	// seen are the revisions the prefixes' mirrors have handed over
	// (mirrorFuncs.seen), in the order of prefixes; each mirror pokes the
	// asker once it has raised its own (mirrorFuncs.askers).
	seen    []*atomic.Int64
	request func(ctx context.Context, prefix string) error
	timeout time.Duration

	wanted  atomic.Int64
	running atomic.Bool
	// moved wakes the goroutine: a want or a seen revision rose.
	moved chan struct{}
}

// newProgressAsker returns an asker of prefixes, mirrored by s.
func newProgressAsker(s *ReplicationManager, prefixes ...string) *progressAsker {
	a := &progressAsker{prefixes: prefixes, request: s.store.RequestProgress, timeout: s.opts.EtcdTimeout, moved: make(chan struct{}, 1)}
	for _, prefix := range a.prefixes {
		a.seen = append(a.seen, s.seen[prefix])
	}
	return a
}

// want asks for the view to reach rev, until the term ends.
func (a *progressAsker) want(rev int64) {
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
func (a *progressAsker) poke() {
	select {
	case a.moved <- struct{}{}:
	default:
	}
}

// lagging returns the prefixes whose mirrors have not handed over rev.
func (a *progressAsker) lagging(rev int64) []string {
	var behind []string
	for i, prefix := range a.prefixes {
		if a.seen[i].Load() < rev {
			behind = append(behind, prefix)
		}
	}
	return behind
}

// run asks until every want is met, or ctx ends.
func (a *progressAsker) run(ctx context.Context) {
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
func (a *progressAsker) ask(ctx context.Context, prefixes []string) {
	for _, prefix := range prefixes {
		reqCtx, cancel := context.WithTimeout(ctx, a.timeout)
		_ = a.request(reqCtx, prefix) // best effort: unanswered, it is asked again
		cancel()
	}
}
