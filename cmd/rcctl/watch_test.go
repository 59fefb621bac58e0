package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// watching runs rcctl with args (get --watch ...) until the test calls
// the returned stop, which returns what the command returned.
func (e *testEnv) watching(args ...string) (stdout *syncbuf.Buffer, stop func() error) {
	e.t.Helper()
	stdout = &syncbuf.Buffer{}
	var stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	c := e.cli(stdout, &stderr)
	go func() { done <- c.run(ctx, e.args(args)) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return fmt.Errorf("get --watch did not return within 10s of the interrupt")
		}
	}
	e.t.Cleanup(func() { _ = stop() })
	return stdout, stop
}

// awaitLines waits until out holds exactly want, line for line.
func awaitLines(t *testing.T, out *syncbuf.Buffer, want ...string) {
	t.Helper()
	testpoll.Eventually(t, 10*time.Second, func() error {
		got := tableRows(out.String())
		if len(got) != len(want) {
			return fmt.Errorf("printed\n%s\nwant %d lines", out, len(want))
		}
		for i := range want {
			if strings.Join(got[i], " ") != want[i] {
				return fmt.Errorf("printed\n%s\nline %d: %q, want %q", out, i+1, strings.Join(got[i], " "), want[i])
			}
		}
		return nil
	})
}

func TestGetWatchPrintsARowPerChangeUntilInterrupted(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))

	out, stop := e.watching("get", "--watch")
	awaitLines(t, out,
		"ID DESIRED CURRENT READY UP-TO-DATE STATUS AGE IMAGE",
		"web 3 <none> <none> <none> Pending <unknown> demo-task:latest")

	// a status: a row; the same status again, only lastSyncTime moved:
	// the row is as it was, nothing printed
	st := &api.ReplicationControllerStatus{ID: "web", Replicas: 1, ReadyReplicas: 0, ObservedRevision: rev, CreationTimestamp: e.now.Add(-time.Hour)}
	e.putStatus(st)
	awaitLines(t, out,
		"ID DESIRED CURRENT READY UP-TO-DATE STATUS AGE IMAGE",
		"web 3 <none> <none> <none> Pending <unknown> demo-task:latest",
		"web 3 1 0 0 Progressing 60m demo-task:latest")
	st.LastSyncTime = e.now
	e.putStatus(st)
	// a new controller, then web scaled, then web deleted: its last row
	e.create(newController("api", 1))
	spec := e.get("web")
	spec.Controller.DesiredState.Replicas = 5
	if _, err := e.store.UpdateController(t.Context(), spec.Controller, spec.ModRevision); err != nil {
		t.Fatal(err)
	}
	awaitLines(t, out,
		"ID DESIRED CURRENT READY UP-TO-DATE STATUS AGE IMAGE",
		"web 3 <none> <none> <none> Pending <unknown> demo-task:latest",
		"web 3 1 0 0 Progressing 60m demo-task:latest",
		"api 1 <none> <none> <none> Pending <unknown> demo-task:latest",
		"web 5 1 0 0 Progressing 60m demo-task:latest")
	if err := e.store.DeleteController(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	awaitLines(t, out,
		"ID DESIRED CURRENT READY UP-TO-DATE STATUS AGE IMAGE",
		"web 3 <none> <none> <none> Pending <unknown> demo-task:latest",
		"web 3 1 0 0 Progressing 60m demo-task:latest",
		"api 1 <none> <none> <none> Pending <unknown> demo-task:latest",
		"web 5 1 0 0 Progressing 60m demo-task:latest",
		"web 5 1 0 0 Progressing 60m demo-task:latest")

	if err := stop(); err != nil {
		t.Errorf("interrupted watch returned %v, want nil", err)
	}
	// the rows line up with the header
	lines := strings.Split(out.String(), "\n")
	if col := strings.Index(lines[0], "IMAGE"); strings.Index(lines[3], "demo-task") != col {
		t.Errorf("rows do not line up with the header:\n%s", out)
	}
}

func TestGetWatchOfOneControllerWithSelectorAndFormats(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	e.create(newController("api", 1))

	// one ID, as jsonpath: a line per change of web only
	out, stop := e.watching("get", "web", "-w", "-o", "jsonpath={.id} {.currentState.readyReplicas}")
	awaitLines(t, out, "web")
	e.putStatus(&api.ReplicationControllerStatus{ID: "api", Replicas: 1, ReadyReplicas: 1})
	e.putStatus(&api.ReplicationControllerStatus{ID: "web", Replicas: 3, ReadyReplicas: 2, ObservedRevision: rev})
	awaitLines(t, out, "web", "web 2")
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// -l: api leaves the selection when its labels change, printed once
	out, stop = e.watching("get", "-w", "-l", "name=api", "-o", "name")
	awaitLines(t, out, "controller/api")
	spec := e.get("api")
	spec.Controller.Labels = map[string]string{"name": "api2"}
	if _, err := e.store.UpdateController(t.Context(), spec.Controller, spec.ModRevision); err != nil {
		t.Fatal(err)
	}
	awaitLines(t, out, "controller/api", "controller/api")
	e.putStatus(&api.ReplicationControllerStatus{ID: "api", Replicas: 7})
	e.putStatus(&api.ReplicationControllerStatus{ID: "web", Replicas: 7})
	time.Sleep(200 * time.Millisecond) // nothing more may come
	awaitLines(t, out, "controller/api", "controller/api")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
