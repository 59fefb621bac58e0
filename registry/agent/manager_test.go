package agent

// Integration tests: the manager runs for real against the embedded etcd,
// with the fake in place of Docker.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// run starts the node's manager too (the leader runs already), until the
// test ends.
func (h *harness) run(t *testing.T) {
	t.Helper()
	h.stopBackground()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func (h *harness) create(t *testing.T, rc *api.ReplicationController) {
	t.Helper()
	if _, err := h.store.CreateController(t.Context(), rc); err != nil {
		t.Fatalf("create %s: %v", rc.ID, err)
	}
}

func (h *harness) scale(t *testing.T, id string, replicas int) {
	t.Helper()
	spec, err := h.store.GetController(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	spec.Controller.DesiredState.Replicas = replicas
	if _, err := h.store.UpdateController(t.Context(), spec.Controller, spec.ModRevision); err != nil {
		t.Fatalf("scale %s: %v", id, err)
	}
}

// waitForNames waits until the fake's containers are exactly want.
func (h *harness) waitForNames(t *testing.T, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	testpoll.Until(t, waitTimeout, "containers "+sprint(want), func() bool {
		return slices.Equal(names(h.fake.Tasks()), want)
	})
}

func sprint(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestManagerFollowsSpecWrites(t *testing.T) {
	h := newHarness(t, Options{})
	h.run(t)

	h.create(t, newController("web", 2))
	h.waitForNames(t, "web-1", "web-2")
	h.scale(t, "web", 4)
	h.waitForNames(t, "web-1", "web-2", "web-3", "web-4")
	h.scale(t, "web", 1)
	h.waitForNames(t, "web-1")
	testpoll.Until(t, waitTimeout, "status with 1 replica", func() bool {
		st := h.status(t, "web")
		return st != nil && st.Replicas == 1
	})

	if err := h.store.DeleteController(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	h.waitForNames(t)
	testpoll.Until(t, waitTimeout, "status deleted", func() bool { return h.status(t, "web") == nil })
}

func TestManagerInvalidSpecDoesNotStopOthers(t *testing.T) {
	h := newHarness(t, Options{})
	h.run(t)
	ctx := t.Context()
	if _, err := h.client.Put(ctx, h.store.ControllerKey("broken"), `{"id": "broken", "desiredState": {"replicas": "three"}}`); err != nil {
		t.Fatal(err)
	}
	h.create(t, newController("web", 1))
	h.waitForNames(t, "web-1")
	testpoll.Until(t, waitTimeout, "InvalidSpec on broken", func() bool {
		st := h.status(t, "broken")
		return st != nil && st.FindCondition(api.ConditionInvalidSpec) != nil
	})
}

func TestManagerRemovesContainersOfControllerDeletedWhileDown(t *testing.T) {
	h := newHarness(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	h.create(t, newController("web", 2))
	h.waitForNames(t, "web-1", "web-2")
	testpoll.Until(t, waitTimeout, "status written", func() bool { return h.status(t, "web") != nil })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	if err := h.store.DeleteController(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	restarted := h.newNodeManager(t, Options{})
	h.rm = restarted
	h.run(t)
	h.waitForNames(t)
}

func TestManagerRelistsAfterCompactionAndMissesNothing(t *testing.T) {
	h := newHarness(t, Options{})
	h.stopBackground() // drain reads both lanes
	ctx := t.Context()
	h.create(t, newController("web", 1))
	h.create(t, newController("db", 1))
	specs := &specMirror{rm: h.rm, ignored: map[string]bool{}}
	rev, err := h.store.MirrorList(ctx, h.store.ControllersPrefix(), specs)
	if err != nil {
		t.Fatal(err)
	}
	drain(h)

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
	queued := drain(h)
	slices.Sort(queued)
	if want := []string{"api", "db", "web"}; !slices.Equal(queued, want) {
		t.Errorf("queued after relist = %v, want %v", queued, want)
	}
	if spec, ok, _ := h.rm.specs.get("web"); !ok || spec.Controller.DesiredState.Replicas != 3 {
		t.Errorf("web after relist = %+v, want 3 replicas", spec.Controller)
	}
	if _, ok, _ := h.rm.specs.get("db"); ok {
		t.Error("db still in the cache after relist")
	}
}

func TestManagerIgnoresStaleRevision(t *testing.T) {
	h := newHarness(t, Options{})
	h.stopBackground() // drain reads both lanes
	ctx := t.Context()
	h.create(t, newController("web", 1))
	old, err := h.client.Get(ctx, h.store.ControllerKey("web"))
	if err != nil {
		t.Fatal(err)
	}
	h.scale(t, "web", 3)
	specs := &specMirror{rm: h.rm, ignored: map[string]bool{}}
	if _, err := h.store.MirrorList(ctx, h.store.ControllersPrefix(), specs); err != nil {
		t.Fatal(err)
	}
	drain(h)

	// the old value arrives late, as a delayed event would
	kv0 := old.Kvs[0]
	specs.Put(registry.KV{Key: string(kv0.Key), Value: kv0.Value, ModRev: kv0.ModRevision, CreateRev: kv0.CreateRevision})
	if got := drain(h); len(got) != 0 {
		t.Errorf("stale event queued %v, want nothing", got)
	}
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	validateSyncReplication(t, h.fake, 3, 0)
}

// drain empties the queue and returns what it held.
// drain empties both lanes, the queue and the feeder's, and returns what
// was in them. Tests that drain stop the harness's feeder first
// (stopBackground), so that nothing moves between the lanes meanwhile.
func drain(h *harness) []string {
	var out []string
	for h.rm.queue.Len() > 0 {
		id, _ := h.rm.queue.Get()
		h.rm.finished(id)
		h.rm.queue.Forget(id)
		out = append(out, id)
	}
	for id, ok := h.rm.background.pop(); ok; id, ok = h.rm.background.pop() {
		out = append(out, id)
	}
	return out
}

func TestRunReturnsWhenEtcdRefusesTheManagerForGood(t *testing.T) {
	srv := etcdtest.Start(t, func(cfg *embed.Config) { cfg.BcryptCost = 4 })
	root := srv.Client(t)
	ctx := t.Context()
	for _, step := range []func() error{
		func() error { _, err := root.RoleAdd(ctx, "root"); return err },
		func() error { _, err := root.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := root.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := root.UserAdd(ctx, "nobody", "pw"); return err }, // no role at all
		func() error { _, err := root.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.ClientURL}, DialTimeout: 5 * time.Second, Username: "nobody", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	rm := New(registry.NewStore(client, ""), &taskcontrol.Fake{}, testLogger(t), Options{})

	runCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = rm.Run(runCtx)
	if !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Fatalf("Run = %v, want it to end with etcd's permission denied", err)
	}
	if runCtx.Err() != nil {
		t.Error("Run kept retrying a refusal until the test's deadline")
	}
}

func TestRunReturnsNilOnAStop(t *testing.T) {
	h := newHarness(t, Options{})
	h.stopBackground()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	<-h.rm.specs.listedCh
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after a stop = %v, want nil", err)
	}
}

func TestTheViewShowsWhatTheManagerKnows(t *testing.T) {
	h := newHarness(t, Options{})
	h.run(t)
	h.create(t, newController("web", 2))
	h.waitForNames(t, "web-1", "web-2")
	testpoll.Until(t, waitTimeout, "web's view with its status", func() bool {
		v, ok := h.rm.Controller("web")
		return ok && v.Status != nil && v.Status.Replicas == 2 && len(v.Containers) == 2
	})
	views := h.rm.Controllers()
	if len(views) != 1 || views[0].ID != "web" || views[0].Spec.DesiredState.Replicas != 2 || views[0].Containers[0].Name != "web-1" {
		t.Errorf("views = %+v, want web with 2 replicas, its containers by name", views)
	}
	if _, ok := h.rm.Controller("nope"); ok {
		t.Error("a view of an unknown controller")
	}
}

func TestATemplateChangeWaitsInTheSecondLaneAndAScaleDoesNot(t *testing.T) {
	h := newHarness(t, Options{})
	h.stopBackground() // drain reads both lanes
	put := func(rc *api.ReplicationController, rev int64) {
		h.rm.applyEvent(registry.ControllerEvent{Spec: registry.Spec{ID: rc.ID, Controller: rc, ModRevision: rev, CreateRevision: 1}})
	}
	put(newController("web", 2), 10)
	if h.rm.queue.Len() != 1 {
		t.Fatalf("a new controller: queue %d, want it queued at once", h.rm.queue.Len())
	}
	drain(h)

	changed := newController("web", 2)
	changed.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
	put(changed, 11)
	if h.rm.queue.Len() != 0 {
		t.Errorf("a template change went straight to the queue")
	}
	if got := drain(h); !slices.Equal(got, []string{"web"}) {
		t.Errorf("second lane = %v, want [web]", got)
	}

	put(newController("web", 5), 12)
	if h.rm.queue.Len() != 1 {
		t.Errorf("a scale: queue %d, want it queued at once", h.rm.queue.Len())
	}
}
