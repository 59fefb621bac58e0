package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
)

// startCLI runs rcctl in the background, as runCLI does, with a stdout
// the test reads while it runs; the result comes on the channel.
func startCLI(t *testing.T, e *testEnv, args ...string) (*syncbuf.Buffer, <-chan result) {
	t.Helper()
	var stdout, stderr syncbuf.Buffer
	c := e.cli(&stdout, &stderr)
	done := make(chan result, 1)
	go func() {
		err := c.run(t.Context(), e.args(args))
		done <- result{stdout.String(), stderr.String(), err}
	}()
	return &stdout, done
}

// awaitOutput waits until out contains want.
func awaitOutput(t *testing.T, out *syncbuf.Buffer, want string) {
	t.Helper()
	testpoll.Until(t, 10*time.Second, "output "+want, func() bool { return strings.Contains(out.String(), want) })
}

// awaitResult waits for a background rcctl to end.
func awaitResult(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("rcctl did not end within 20s")
		return result{}
	}
}

// rolling is a status of web at revision rev with a Progressing condition.
func rolling(rev int64, status, reason, message string) *api.ReplicationControllerStatus {
	return &api.ReplicationControllerStatus{
		ID: "web", Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedRevision: rev,
		Conditions: []api.Condition{{Type: api.ConditionProgressing, Status: status, Reason: reason, Message: message}},
	}
}

func TestRolloutStatusShowsProgressUntilTheRolloutCompletes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	// the status of the spec before: complete, but of an older revision
	e.putStatus(rolling(rev-1, "True", api.ReasonRolloutComplete, "3 of 3 updated, 3 available"))

	out, done := startCLI(t, e, "rollout", "status", "web", "--timeout", "20s")
	awaitOutput(t, out, "has not seen")
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 0 available"))
	awaitOutput(t, out, "1 of 3")
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 0 available")) // no change: no line
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "2 of 3 updated, 1 available"))
	awaitOutput(t, out, "2 of 3")
	e.putStatus(rolling(rev, "True", api.ReasonRolloutComplete, "3 of 3 updated, 3 available"))
	r := awaitResult(t, done)

	assertStdout(t, r, ""+
		"Waiting for rollout of web: the manager has not seen revision "+itoa(rev)+" of the spec yet...\n"+
		"Waiting for rollout of web: 1 of 3 updated, 0 available...\n"+
		"Waiting for rollout of web: 2 of 3 updated, 1 available...\n"+
		"rollout of web complete\n")
}

func TestRolloutStatusOfACompleteRolloutSucceedsAtOnce(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "True", api.ReasonRolloutComplete, "3 of 3 updated, 3 available"))

	r := e.runCLI("rollout", "status", "web")

	assertStdout(t, r, "rollout of web complete\n")
}

func TestRolloutStatusFollowsANewerSpec(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 1 available"))

	out, done := startCLI(t, e, "rollout", "status", "web", "--timeout", "20s")
	awaitOutput(t, out, "1 of 3")
	assertOK(t, e.run("", "rollout", "restart", "web")) // a newer spec while waiting
	newRev := e.get("web").ModRevision
	// complete, for the older spec: not the end
	e.putStatus(rolling(rev, "True", api.ReasonRolloutComplete, "3 of 3 updated, 3 available"))
	awaitOutput(t, out, "has not seen revision "+itoa(newRev))
	e.putStatus(rolling(newRev, "True", api.ReasonRolloutComplete, "3 of 3 updated, 3 available"))
	r := awaitResult(t, done)

	assertOK(t, r)
	assertContains(t, r.stdout, "has not seen revision "+itoa(newRev), "rollout of web complete\n")
}

func TestRolloutStatusFailsWhenTheProgressDeadlineIsExceeded(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 0 available"))

	out, done := startCLI(t, e, "rollout", "status", "web", "--timeout", "20s")
	awaitOutput(t, out, "1 of 3")
	e.putStatus(rolling(rev, "False", api.ReasonProgressDeadlineExceeded, "1 of 3 updated, 0 available; no progress for 10m0s"))
	r := awaitResult(t, done)

	assertFails(t, r, "rollout of web exceeded its progress deadline: 1 of 3 updated, 0 available; no progress for 10m0s")
	if got := exitCode(r.err); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
}

func TestRolloutStatusTimesOut(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 0 available"))

	r := e.runCLI("rollout", "status", "web", "--timeout", "300ms")

	assertFails(t, r, "rollout of web not complete after 300ms (1 of 3 updated, 0 available)")
	if r.stdout != "Waiting for rollout of web: 1 of 3 updated, 0 available...\n" {
		t.Errorf("stdout %q, want one progress line", r.stdout)
	}
}

func TestRolloutStatusWithoutAManagerTimesOutSayingSo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.runCLI("rollout", "status", "web", "--timeout", "300ms")

	assertFails(t, r, "rollout of web not complete after 300ms (the manager has written no status yet: is it running?)")
}

func TestRolloutStatusFailsWhenTheControllerIsDeletedWhileWaiting(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "True", api.ReasonRollingUpdate, "1 of 3 updated, 0 available"))

	out, done := startCLI(t, e, "rollout", "status", "web", "--timeout", "20s")
	awaitOutput(t, out, "1 of 3")
	assertOK(t, e.run("", "delete", "web"))
	r := awaitResult(t, done)

	assertFails(t, r, `controller "web" was deleted while waiting for its rollout`)
}

func TestRolloutStatusOfAnUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.runCLI("rollout", "status", "nope")

	assertFails(t, r, `controller "nope" not found`)
}

func TestRolloutStatusWarnsOfReplicaFailures(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	st := rolling(rev, "True", api.ReasonRollingUpdate, "0 of 3 updated, 0 available")
	st.Conditions = append(st.Conditions, api.Condition{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed, Message: "create web-3: no such image: demo-task:2"})
	e.putStatus(st)

	r := e.runCLI("rollout", "status", "web", "--timeout", "300ms")

	assertFails(t, r, "not complete after 300ms")
	assertContains(t, r.stderr, "warning: CreateFailed: create web-3: no such image: demo-task:2\n")
}

func TestRolloutStatusDoesNotWarnOfAnOlderSpecsFailures(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	st := rolling(rev-1, "True", api.ReasonRollingUpdate, "0 of 3 updated, 0 available")
	st.Conditions = append(st.Conditions, api.Condition{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed, Message: "create web-3: no such image: demo-task:2"})
	e.putStatus(st)

	r := e.runCLI("rollout", "status", "web", "--timeout", "300ms")

	assertFails(t, r, "not complete after 300ms")
	if r.stderr != "" {
		t.Errorf("stderr %q, want no warning from the status of an older spec", r.stderr)
	}
}

func TestRolloutProgress(t *testing.T) {
	t.Parallel()
	onDelete := newController("web", 3)
	onDelete.DesiredState.UpdateStrategy = &api.UpdateStrategy{Type: api.OnDelete}
	spec := func(rc *api.ReplicationController) registry.Spec {
		return registry.Spec{ID: "web", Controller: rc, ModRevision: 10}
	}
	web := spec(newController("web", 3))
	withCond := func(st *api.ReplicationControllerStatus, c api.Condition) *api.ReplicationControllerStatus {
		st.Conditions = append(st.Conditions, c)
		return st
	}
	for _, tt := range []struct {
		name    string
		s       snapshot
		done    bool
		err     string
		waiting string
	}{
		{"no status", snapshot{spec: web}, false, "", "the manager has written no status yet"},
		{"an older revision's status", snapshot{spec: web, status: rolling(9, "True", api.ReasonRolloutComplete, "")},
			false, "", "the manager has not seen revision 10 of the spec yet"},
		{"rolling", snapshot{spec: web, status: rolling(10, "True", api.ReasonRollingUpdate, "1 of 3 updated, 1 available")},
			false, "", "1 of 3 updated, 1 available"},
		{"paused", snapshot{spec: web, status: rolling(10, "True", api.ReasonRollingUpdate, "1 of 3 updated, 1 available; paused")},
			false, "", "1 of 3 updated, 1 available; paused"},
		{"complete", snapshot{spec: web, status: rolling(11, "True", api.ReasonRolloutComplete, "3 of 3 updated, 3 available")}, true, "", ""},
		{"stalled", snapshot{spec: web, status: rolling(10, "False", api.ReasonProgressDeadlineExceeded, "0 of 3 updated, 0 available; no progress for 1m0s")},
			false, "rollout of web exceeded its progress deadline: 0 of 3 updated, 0 available; no progress for 1m0s", ""},
		{"refused", snapshot{spec: web, status: withCond(&api.ReplicationControllerStatus{ObservedRevision: 10},
			api.Condition{Type: api.ConditionInvalidSpec, Status: "True", Message: "privileged: refused"})},
			false, "rollout of web: the manager refused the spec: privileged: refused", ""},
		{"OnDelete", snapshot{spec: spec(onDelete), status: rolling(10, "True", api.ReasonRollingUpdate, "1 of 3 updated, 1 available")},
			false, "rollout of web does not finish by itself: its updateStrategy is OnDelete", ""},
		{"no Progressing condition", snapshot{spec: web, status: &api.ReplicationControllerStatus{ObservedRevision: 10, UpdatedReplicas: 2, AvailableReplicas: 3}},
			false, "", "2 of 3 updated, 3 available (the manager reports no Progressing condition)"},
		{"an undecodable spec", snapshot{spec: registry.Spec{ID: "web", Err: errors.New("bad"), ModRevision: 10}, status: &api.ReplicationControllerStatus{ObservedRevision: 9}},
			false, "", "the manager has not seen revision 10 of the spec yet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := rolloutProgress("web", tt.s)
			if got.done != tt.done || got.waiting != tt.waiting || (got.err == nil) != (tt.err == "") ||
				(got.err != nil && !strings.Contains(got.err.Error(), tt.err)) {
				t.Errorf("rolloutProgress = %+v, want done %v, waiting %q, error %q", got, tt.done, tt.waiting, tt.err)
			}
		})
	}
}

func TestRolloutStatusWhenEtcdDoesNotAnswerFailsWithinTheDialTimeout(t *testing.T) {
	t.Parallel()
	start := time.Now()

	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--etcd-servers", silentAddr(t), "--etcd-dial-timeout", "1s", "rollout", "status", "web"}, strings.NewReader(""), &stdout, &stderr)
	r := result{stdout.String(), stderr.String(), err}

	assertFails(t, r, "did not answer within 1s")
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %s, want about the 1s dial timeout, not the rollout's --timeout", elapsed)
	}
}

func TestRolloutStatusFailsWhenTheRolloutWasRolledBack(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.putStatus(rolling(rev, "False", api.ReasonRolledBack, "rollout of revision 2 failed (1 new container(s) failed); rolled back to revision 1"))

	r := e.run("", "rollout", "status", "web", "--timeout", "20s")

	assertFails(t, r, "rollout of web failed and was rolled back (the spec still names the failed template): rollout of revision 2 failed")
	if got := exitCode(r.err); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
}
