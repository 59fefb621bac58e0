package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// newTestLeader returns a leader on its own etcd client, so that closing
// that client kills its session as a crash would.
func newTestLeader(t *testing.T, srv *etcdtest.Server, name string) (*leader, context.CancelFunc, chan error) {
	t.Helper()
	client := srv.Client(t)
	store := registry.NewStore(client, "/leadertest")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := &leader{
		client: client, store: store, logger: logger, identity: name, ttl: 2 * time.Second,
		newManager: func(tc registry.TaskControlInterface) *registry.ReplicationManager {
			return registry.NewReplicationManager(store, tc, logger, registry.Options{})
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.run(ctx, &taskcontrol.Fake{}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("leader %s stopped with %v", name, err)
		}
	})
	return l, cancel, done
}

func waitFor(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func TestLeaderElectionOneLeadsAndStandbyTakesOverAfterCrash(t *testing.T) {
	srv := etcdtest.Start(t)
	a, _, _ := newTestLeader(t, srv, "a")
	waitFor(t, "a to lead", a.leading.Load)
	b, _, _ := newTestLeader(t, srv, "b")
	time.Sleep(500 * time.Millisecond) // b campaigns meanwhile
	if b.leading.Load() {
		t.Fatal("b leads while a leads")
	}

	// a dies without resigning: its client goes away, its lease expires
	if err := a.client.Close(); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, "b to take over", b.leading.Load)
	if took > 2*a.ttl+time.Second {
		t.Errorf("b took over after %s, want within about the TTL (%s)", took, a.ttl)
	}
	t.Logf("handover after the leader's crash: %s", took)
}

func TestLeaderResignsOnShutdownSoStandbyTakesOverAtOnce(t *testing.T) {
	srv := etcdtest.Start(t)
	a, stopA, doneA := newTestLeader(t, srv, "a")
	waitFor(t, "a to lead", a.leading.Load)
	b, _, _ := newTestLeader(t, srv, "b")

	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("a stopped with %v", err)
	}
	doneA <- nil // for the cleanup
	took := waitFor(t, "b to take over", b.leading.Load)
	if took > a.ttl {
		t.Errorf("b took over after %s, want well under the TTL: a resigned", took)
	}
}

func TestFencedTasksRefuseChangesOnceSessionIsLost(t *testing.T) {
	srv := etcdtest.Start(t)
	client := srv.Client(t)
	sessionCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := &taskcontrol.Fake{}
	session, err := newSessionForTest(sessionCtx, client)
	if err != nil {
		t.Fatal(err)
	}
	fenced := &fencedTasks{TaskControlInterface: fake, session: session}
	if _, err := fenced.CreateTask(context.Background(), api.TaskSpec{Name: "web-1"}); err != nil {
		t.Fatalf("create while the session lives: %v", err)
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fenced.CreateTask(context.Background(), api.TaskSpec{Name: "web-2"}); !errors.Is(err, errNotLeader) {
		t.Errorf("create after the session ended = %v, want errNotLeader", err)
	}
	if err := fenced.DeleteTask(context.Background(), "x"); !errors.Is(err, errNotLeader) {
		t.Errorf("delete after the session ended = %v, want errNotLeader", err)
	}
	if got := fake.Creates(); len(got) != 1 {
		t.Errorf("creates reaching Docker = %v, want only web-1", got)
	}
}

func newSessionForTest(ctx context.Context, client *clientv3.Client) (*concurrency.Session, error) {
	return concurrency.NewSession(client, concurrency.WithTTL(2), concurrency.WithContext(ctx))
}
