package main

import (
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// blockedSlotMessage is how the manager names a slot that fits no node.
const blockedSlotMessage = "slot web-3 fits no node: no node has room (a: cpu: needs 512 shares (a reservation: 1024 = one CPU), 0 free of 2048)"

// statusOnceAsked plays the manager: once the spec of id asks for 3
// replicas, it writes the statuses made for that spec's revision, one
// after another.
func statusOnceAsked(t *testing.T, e *testEnv, id string, statuses ...func(rev int64) *api.ReplicationControllerStatus) {
	t.Helper()
	cn := e.conn()
	background(t, func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if s, ok := tryGet(cn, id); ok && s.Controller.DesiredState.Replicas == 3 {
				for _, st := range statuses {
					e.putStatus(st(s.ModRevision))
					time.Sleep(50 * time.Millisecond)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// blockedStatus is web at rev with two of three replicas, the third's slot
// fitting no node.
func blockedStatus(rev int64) *api.ReplicationControllerStatus {
	return &api.ReplicationControllerStatus{ID: "web", Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2, ObservedRevision: rev,
		Conditions: []api.Condition{
			{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonUnschedulable, Message: "slot(s) 3 fit no node: no node has room (a: cpu: ...)"},
			{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonBlocked, Message: blockedSlotMessage + "; 2 of 3 updated, 2 available"},
		}}
}

func TestScaleWaitFailsAtOnceWhenTheControllerIsBlocked(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 1))
	statusOnceAsked(t, e, "web", blockedStatus)

	start := time.Now()
	r := e.run("", "scale", "web", "--replicas", "3", "--wait", "--timeout", "60s")

	assertFails(t, r, `controller "web" is blocked (it cannot progress without a change): `+blockedSlotMessage)
	if got := exitCode(r.err); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
	if !strings.Contains(r.stderr, "warning: Unschedulable: slot(s) 3 fit no node") {
		t.Errorf("stderr %q does not warn of the slot that fits no node", r.stderr)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("scale --wait took %s to give up on a blocked controller", took)
	}
}

func TestWaitWarnsOfACrashLoopAndWaitsOn(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 1))
	crashing := func(rev int64) *api.ReplicationControllerStatus {
		return &api.ReplicationControllerStatus{ID: "web", Replicas: 3, ReadyReplicas: 2, ObservedRevision: rev, Conditions: []api.Condition{
			{Type: api.ConditionCrashLoop, Status: "True", Reason: "BackOff", Message: "node a: web-3 exited with code 1, 2 crashes in a row"}}}
	}
	ready := func(rev int64) *api.ReplicationControllerStatus {
		return &api.ReplicationControllerStatus{ID: "web", Replicas: 3, ReadyReplicas: 3, ObservedRevision: rev}
	}
	statusOnceAsked(t, e, "web", crashing, crashing, ready)

	r := e.run("", "scale", "web", "--replicas", "3", "--wait", "--timeout", "20s")

	assertOK(t, r)
	if n := strings.Count(r.stderr, "warning: BackOff: node a: web-3 exited with code 1"); n != 1 {
		t.Errorf("stderr %q: the crash loop warned of %d times, want once", r.stderr, n)
	}
}

func TestRunWaitWaitsUntilEveryReplicaIsReady(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	managerReports(t, e, "web", 1, 3)

	r := e.run("", "run", "web", "--image", "demo-task:latest", "--replicas", "3", "--wait", "--timeout", "20s")

	assertOK(t, r)
	assertContains(t, r.stdout, `controller "web" created`, "web: 3 of 3 ready")
}

func TestRunWaitFailsAtOnceWhenTheControllerIsBlocked(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	statusOnceAsked(t, e, "web", blockedStatus)

	r := e.run("", "run", "web", "--image", "demo-task:latest", "--replicas", "3", "--wait", "--timeout", "60s")

	assertFails(t, r, `controller "web" is blocked (it cannot progress without a change): slot web-3 fits no node`)
}

func TestRolloutStatusFailsAtOnceWhenTheControllerIsBlocked(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 2 available"))

	out, done := startCLI(t, e, "rollout", "status", "web", "--timeout", "60s")
	awaitOutput(t, out, "1 of 3")
	e.putStatus(blockedStatus(rev))
	r := awaitResult(t, done)

	assertFails(t, r, "rollout of web is blocked (it cannot progress without a change): "+blockedSlotMessage+"; 2 of 3 updated, 2 available")
	if got := exitCode(r.err); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
	if !strings.Contains(r.stderr, "warning: Unschedulable: slot(s) 3 fit no node") {
		t.Errorf("stderr %q does not warn of the slot that fits no node", r.stderr)
	}
}
