package registry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// revisionTarget is a mirror target that keeps the newest revision it was
// handed or told.
type revisionTarget struct{ rev atomic.Int64 }

func (p *revisionTarget) Reset(_ []KV, rev int64) { p.rev.Store(rev) }
func (p *revisionTarget) Put(k KV)                { p.rev.Store(k.ModRev) }
func (p *revisionTarget) Del(_ string, rev int64) { p.rev.Store(rev) }
func (p *revisionTarget) Progress(rev int64)      { p.rev.Store(rev) }

// TestAMirrorIsToldTheRevisionItsWatchReached: a progress request for a
// mirror's prefix tells it the revision of a write elsewhere, also while
// another mirror of the same client has just listed at that revision (on
// one stream, etcd would drop the request: that mirror's watch starts
// after the newest revision).
func TestAMirrorIsToldTheRevisionItsWatchReached(t *testing.T) {
	s := NewStore(testClient(t), "/"+t.Name())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	deadline := time.Now().Add(10 * time.Second)
	mirror := func(prefix string) *revisionTarget {
		p := &revisionTarget{}
		go func() { _ = s.Mirror(ctx, prefix, p, t.Logf) }()
		for p.rev.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		return p
	}
	specs := mirror(s.ControllersPrefix())
	resp, err := s.Client().Put(ctx, s.NodesPrefix()+"x", "1")
	if err != nil {
		t.Fatal(err)
	}
	if listed := mirror(s.AssignmentsPrefix()); listed.rev.Load() != resp.Header.Revision {
		t.Fatalf("the second mirror listed at %d, want %d", listed.rev.Load(), resp.Header.Revision)
	}
	for specs.rev.Load() < resp.Header.Revision && time.Now().Before(deadline) {
		if err := s.RequestProgress(ctx, s.ControllersPrefix()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := specs.rev.Load(); got < resp.Header.Revision {
		t.Fatalf("the mirror of the specs is at %d, want %d", got, resp.Header.Revision)
	}
}
