package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// tryGet reads a spec without failing the test (it runs in goroutines).
func tryGet(cn *conn, id string) (registry.Spec, bool) {
	s, err := cn.store.GetController(context.Background(), id)
	return s, err == nil && s.Controller != nil
}

// managerReports plays the manager: once the spec asks for 3 replicas, it
// writes statuses with the given ready counts, one after another.
func managerReports(t *testing.T, e *testEnv, id string, ready ...int) {
	t.Helper()
	cn := e.conn()
	go func() {
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
	}()
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
	go func() {
		for range 500 {
			if s, ok := tryGet(cn, "web"); ok {
				e.putStatus(&api.ReplicationControllerStatus{ID: "web", ObservedRevision: s.ModRevision,
					Conditions: []api.Condition{{Type: api.ConditionInvalidSpec, Status: "True", Message: "privileged: refused"}}})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	r := e.run(encode(t, rc), "apply", "-f", "-", "--wait", "--timeout", "20s")

	assertFails(t, r, "the manager refused the spec: privileged: refused")
	if !strings.Contains(r.stdout, `controller "web" created`) {
		t.Errorf("stdout %q does not say the controller was created", r.stdout)
	}
}
