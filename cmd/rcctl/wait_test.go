package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// tryGet reads a spec without failing the test (it runs in goroutines).
func tryGet(cn *conn, id string) (registry.Spec, bool) {
	s, err := cn.store.GetController(context.Background(), id)
	return s, err == nil && s.Controller != nil
}

// background runs fn in a goroutine that the test waits for before its
// etcd goes: rcctl may return as soon as it sees a write, before the
// writer has its answer.
func background(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { <-done }) // runs before the cleanups registered earlier, which close etcd
	go func() {
		defer close(done)
		fn()
	}()
}

// managerReports plays the manager: once the spec asks for 3 replicas, it
// writes statuses with the given ready counts, one after another.
func managerReports(t *testing.T, e *testEnv, id string, ready ...int) {
	t.Helper()
	cn := e.conn()
	background(t, func() {
		deadline := time.Now().Add(10 * time.Second)
		var rev int64
		for time.Now().Before(deadline) {
			if s, ok := tryGet(cn, id); ok && s.Controller.DesiredState.Replicas == 3 {
				rev = s.ModRevision
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for _, n := range ready {
			e.putStatus(&api.ReplicationControllerStatus{ID: id, Replicas: 3, ReadyReplicas: n, ObservedRevision: rev})
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func TestScaleWaitShowsProgressUntilEveryReplicaIsReady(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 1))
	managerReports(t, e, "web", 1, 2, 3)

	r := e.run("", "scale", "web", "--replicas", "3", "--wait", "--timeout", "20s")

	assertOK(t, r)
	assertContains(t, r.stdout, "scaled to 3", "of 3 ready", "web: 3 of 3 ready")
}

func TestScaleWaitTimesOutWhenNoManagerAnswers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 1))

	r := e.run("", "scale", "web", "--replicas", "3", "--wait", "--timeout", "1s")

	assertFails(t, r, `controller "web" not ready after 1s`)
}

func TestApplyWaitStopsAtInvalidSpec(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := newController("web", 3)
	cn := e.conn()
	background(t, func() {
		for range 500 {
			if s, ok := tryGet(cn, "web"); ok {
				e.putStatus(&api.ReplicationControllerStatus{ID: "web", ObservedRevision: s.ModRevision,
					Conditions: []api.Condition{{Type: api.ConditionInvalidSpec, Status: "True", Message: "privileged: refused"}}})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	r := e.run(encode(t, rc), "apply", "-f", "-", "--wait", "--timeout", "20s")

	assertFails(t, r, "the manager refused the spec: privileged: refused")
	if !strings.Contains(r.stdout, `controller "web" created`) {
		t.Errorf("stdout %q does not say the controller was created", r.stdout)
	}
}

func TestFollowWatchesAppliesEachEventAndEndsWithTheWatch(t *testing.T) {
	t.Parallel()
	specs, statuses := make(chan clientv3.WatchResponse), make(chan clientv3.WatchResponse)
	status, err := json.Marshal(&api.ReplicationControllerStatus{ID: "web", ReadyReplicas: 2, ObservedRevision: 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	send := func(ch chan clientv3.WatchResponse, resp clientv3.WatchResponse) bool {
		select {
		case ch <- resp:
			return true
		case <-ctx.Done(): // the test ended early
			return false
		}
	}
	go func() {
		_ = send(statuses, clientv3.WatchResponse{}) && // a progress notification: no check
			send(statuses, clientv3.WatchResponse{Events: []*clientv3.Event{{Type: clientv3.EventTypePut, Kv: &mvccpb.KeyValue{Value: status}}}}) &&
			send(specs, clientv3.WatchResponse{Events: []*clientv3.Event{{Type: clientv3.EventTypeDelete, Kv: &mvccpb.KeyValue{}}}})
		close(specs) // etcd ended the watch: follow reads again
	}()
	start := snapshot{spec: registry.Spec{ID: "web", Controller: newController("web", 3), ModRevision: 7}}
	var seen []snapshot

	delivered, done, err := followWatches(ctx, start, specs, statuses, func(s snapshot) (bool, error) {
		seen = append(seen, s)
		return false, nil
	})

	if !delivered || done || err != nil {
		t.Errorf("followWatches = %v, %v, %v; want delivered, not done, no error", delivered, done, err)
	}
	if len(seen) != 2 {
		t.Fatalf("check called %d times, want 2 (once per event)", len(seen))
	}
	if s := seen[0]; s.deleted || s.status == nil || s.status.ReadyReplicas != 2 || s.spec.Controller == nil {
		t.Errorf("after the status event: %+v, want the spec and a status with 2 ready", s)
	}
	if s := seen[1]; !s.deleted || s.spec.Controller != nil || s.status == nil {
		t.Errorf("after the delete: %+v, want deleted, the status kept", s)
	}
}

func TestFollowWatchesEndsWhenEtcdCancelsAWatch(t *testing.T) {
	t.Parallel()
	specs, statuses := make(chan clientv3.WatchResponse, 1), make(chan clientv3.WatchResponse)
	specs <- clientv3.WatchResponse{Canceled: true, CompactRevision: 3}

	delivered, done, err := followWatches(t.Context(), snapshot{}, specs, statuses, func(snapshot) (bool, error) {
		t.Error("check called for a canceled watch")
		return false, nil
	})

	if delivered || done || err != nil {
		t.Errorf("followWatches = %v, %v, %v; want nothing delivered, not done, no error", delivered, done, err)
	}
}
