package agent_test

// The node's two lanes of work: what its spec watch queues at once, what
// waits in the second lane, and what a list after a compaction brings.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/roles"
)

func TestManagerRelistsAfterCompactionAndMissesNothing(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.stopBackground() // Drain reads both lanes
	ctx := t.Context()
	h.create(t, newController("web", 1))
	h.create(t, newController("db", 1))
	specs := h.rm.SpecMirror()
	rev, err := h.store.MirrorList(ctx, h.store.ControllersPrefix(), specs)
	if err != nil {
		t.Fatal(err)
	}
	h.rm.Drain()

	// While the manager is not watching: web changes, db goes, api comes;
	// then history is compacted past the manager's revision.
	h.scale(t, "web", 3)
	if err := h.store.DeleteController(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	h.create(t, newController("api", 1))
	resp, err := h.client.Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}

	watchCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.store.MirrorWatch(watchCtx, h.store.ControllersPrefix(), rev+1, specs); !errors.Is(err, registry.ErrWatchCompacted) {
		t.Fatalf("watch from a compacted revision = %v, want errWatchCompacted", err)
	}
	if _, err := h.store.MirrorList(ctx, h.store.ControllersPrefix(), specs); err != nil {
		t.Fatal(err)
	}
	queued := h.rm.Drain()
	slices.Sort(queued)
	if want := []string{"api", "db", "web"}; !slices.Equal(queued, want) {
		t.Errorf("queued after relist = %v, want %v", queued, want)
	}
	if spec, ok := h.rm.CachedSpec("web"); !ok || spec.Controller.DesiredState.Replicas != 3 {
		t.Errorf("web after relist = %+v, want 3 replicas", spec.Controller)
	}
	if _, ok := h.rm.CachedSpec("db"); ok {
		t.Error("db still in the cache after relist")
	}
}

func TestManagerIgnoresStaleRevision(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.stopBackground() // Drain reads both lanes
	ctx := t.Context()
	h.create(t, newController("web", 1))
	old, err := h.client.Get(ctx, h.store.ControllerKey("web"))
	if err != nil {
		t.Fatal(err)
	}
	h.scale(t, "web", 3)
	specs := h.rm.SpecMirror()
	if _, err := h.store.MirrorList(ctx, h.store.ControllersPrefix(), specs); err != nil {
		t.Fatal(err)
	}
	h.rm.Drain()

	// the old value arrives late, as a delayed event would
	kv0 := old.Kvs[0]
	specs.Put(registry.KV{Key: string(kv0.Key), Value: kv0.Value, ModRev: kv0.ModRevision, CreateRev: kv0.CreateRevision})
	if got := h.rm.Drain(); len(got) != 0 {
		t.Errorf("stale event queued %v, want nothing", got)
	}
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	validateSyncReplication(t, h.fake, 3, 0)
}

func TestATemplateChangeWaitsInTheSecondLaneAndAScaleDoesNot(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.stopBackground() // Drain reads both lanes
	put := func(rc *api.ReplicationController, rev int64) {
		h.rm.ApplyEvent(registry.ControllerEvent{Spec: registry.Spec{ID: rc.ID, Controller: rc, ModRevision: rev, CreateRevision: 1}})
	}
	put(newController("web", 2), 10)
	if h.rm.QueueLen() != 1 {
		t.Fatalf("a new controller: queue %d, want it queued at once", h.rm.QueueLen())
	}
	h.rm.Drain()

	changed := newController("web", 2)
	changed.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
	put(changed, 11)
	if h.rm.QueueLen() != 0 {
		t.Errorf("a template change went straight to the queue")
	}
	if got := h.rm.Drain(); !slices.Equal(got, []string{"web"}) {
		t.Errorf("second lane = %v, want [web]", got)
	}

	put(newController("web", 5), 12)
	if h.rm.QueueLen() != 1 {
		t.Errorf("a scale: queue %d, want it queued at once", h.rm.QueueLen())
	}
}

func TestResyncOfManyControllersCostsOneDockerList(t *testing.T) {
	h := newHarness(t, roles.Options{})
	for i := range 100 {
		rc := newController(fmt.Sprintf("app%d", i), 2)
		h.setSpec(rc)
	}
	ctx := t.Context()
	if err := h.rm.RelistTasks(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range h.rm.SpecIDs() { // converge first
		if err := h.step(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// the steady state: past their monitor windows, the node has asked
	// its engine about every container
	h.clock.Advance(api.DefaultMonitorSeconds * time.Second)
	for _, id := range h.rm.SpecIDs() {
		if err := h.step(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	h.rm.Drain()
	h.fake.Reset()

	done := make(chan error, 1)
	go func() { done <- h.rm.Resync(ctx) }()
	// a worker's loop: the resync feeds as we drain, and returns once its
	// lane is empty. A look at a window's end that the first steps asked
	// for, on the wall clock, may bring a controller once more, after the
	// hundredth: the worker goes on until the resync has returned.
	queued := map[string]bool{}
	for resynced := false; len(queued) < 100 || !resynced; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			resynced = true
			continue
		default:
		}
		if len(queued) == 100 && h.rm.QueueLen() == 0 {
			time.Sleep(time.Millisecond) // nothing to take yet: Take would wait
			continue
		}
		id := h.rm.Take()
		if err := h.step(ctx, id); err != nil {
			t.Fatal(err)
		}
		h.rm.Finished(id)
		queued[id] = true
	}
	c := h.fake.Counts()
	if c.List != 1 || c.Inspect+c.Create+c.Delete+c.Rename != 0 {
		t.Errorf("Docker calls of a steady-state resync of 100 controllers = %+v, want exactly 1 list", c)
	}
	t.Logf("Docker list calls per resync with 100 controllers: %d", c.List)
}

func TestAnEventDuringAResyncWaitsBehindABoundedBacklog(t *testing.T) {
	h := newHarness(t, roles.Options{})
	for i := range 300 {
		h.setSpec(newController(fmt.Sprintf("app%d", i), 1))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := h.rm.RelistTasks(ctx); err != nil { // the start-up list, done
		t.Fatal(err)
	}
	h.rm.Drain()
	done := make(chan error, 1)
	go func() { done <- h.rm.Resync(ctx) }()
	backlog := h.rm.BackgroundBacklog() // no worker runs: one per idle worker, and one
	testpoll.Until(t, waitTimeout, "the resync backlog to fill", func() bool { return h.rm.QueueLen() >= backlog })

	h.rm.Enqueue("from-an-event")
	ahead := 0
	for {
		id := h.rm.Take()
		h.rm.Finished(id)
		if id == "from-an-event" {
			break
		}
		ahead++
	}
	if ahead > backlog {
		t.Errorf("the event's controller waited behind %d others, want at most %d", ahead, backlog)
	}
	cancel() // the rest of the resync is not needed
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
