package agent_test

// Integration tests: the manager runs for real against the embedded etcd,
// with the fake in place of Docker.

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestManagerFollowsSpecWrites(t *testing.T) {
	h := newHarness(t, roles.Options{})
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
	h := newHarness(t, roles.Options{})
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
	h := newHarness(t, roles.Options{})
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
	restarted := h.newNodeManager(t, roles.Options{})
	h.rm = restarted
	h.run(t)
	h.waitForNames(t)
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
	rm := agent.New(registry.NewStore(client, ""), &taskcontrol.Fake{}, testLogger(t), agent.Options{})

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
	h := newHarness(t, roles.Options{})
	h.stopBackground()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	<-h.rm.SpecsListed()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after a stop = %v, want nil", err)
	}
}

func TestTheViewShowsWhatTheManagerKnows(t *testing.T) {
	h := newHarness(t, roles.Options{})
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
