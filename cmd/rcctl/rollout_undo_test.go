package main

import (
	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
)

// rolledOut stores web at demo-task:2, with 5 replicas, an update
// strategy and a label of its own, after demo-task:1 (revision 1, at etcd
// revision 10) and demo-task:2 (revision 2, at 11) in its history, recorded
// before records were numbered.
func rolledOut(t *testing.T, e *testEnv) *api.ReplicationController {
	t.Helper()
	rc := withImage(newController("web", 5), "demo-task:2")
	two := intstr.FromInt(2)
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxUnavailable: &two}
	rc.Labels["team"] = "blue"
	e.create(rc)
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 11, "demo-task:2", time.Hour)
	return rc
}

func TestRolloutUndoWritesThePreviousTemplateBackAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := rolledOut(t, e)
	before := e.get("web").ModRevision

	r := e.runCLI("rollout", "undo", "web")

	assertStdout(t, r, "web rolled back to revision 1\n")
	after := e.get("web")
	want := withImage(rc, "demo-task:1")
	if got := encode(t, after.Controller); got != encode(t, want) {
		t.Errorf("stored spec:\n%s\nwant only the template changed:\n%s", got, encode(t, want))
	}
	if after.ModRevision == before {
		t.Errorf("ModRevision %d did not move", after.ModRevision)
	}
}

func TestRolloutUndoToARevision(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rolledOut(t, e)
	record(t, e, 12, "demo-task:3", 30*time.Minute)

	r := e.runCLI("rollout", "undo", "web", "--to-revision", "3")

	assertStdout(t, r, "web rolled back to revision 3\n")
	if got := e.get("web").Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image; got != "demo-task:3" {
		t.Errorf("stored image %q, want demo-task:3", got)
	}
}

func TestRolloutUndoToTheCurrentRevisionSkipsAndSucceeds(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rolledOut(t, e)
	before := e.revision()

	r := e.runCLI("rollout", "undo", "web", "--to-revision", "2")

	assertStdout(t, r, "web: already at revision 2; nothing changed\n")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestRolloutUndoRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		history []string // images of revisions 10, 11, ...
		args    []string
		want    string
	}{
		{"an unknown revision", []string{"demo-task:1", "demo-task:2"}, []string{"--to-revision", "42"},
			`controller "web" has no revision 42 in its history (see rcctl rollout history web)`},
		{"no previous revision", []string{"demo-task:2"}, nil, `controller "web" has no previous revision`},
		{"no history", nil, nil, `controller "web" has no recorded revisions to go back to`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			e.create(withImage(newController("web", 3), "demo-task:2"))
			for i, image := range tt.history {
				record(t, e, int64(10+i), image, time.Hour)
			}
			before := e.revision()

			r := e.runCLI(append([]string{"rollout", "undo", "web"}, tt.args...)...)

			assertFails(t, r, tt.want)
			if after := e.revision(); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
}

func TestRolloutUndoRefusesATemplateTheSpecNoLongerSelects(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := withImage(newController("web", 3), "demo-task:2")
	rc.DesiredState.ReplicasInSet["tier"] = "front"
	rc.DesiredState.TaskTemplate.Labels["tier"] = "front"
	e.create(rc)
	record(t, e, 10, "demo-task:1", time.Hour) // its labels lack tier=front
	before := e.revision()

	r := e.runCLI("rollout", "undo", "web")

	assertFails(t, r, "invalid with the template of revision 1 (nothing written)", "replicasInSet")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestRolloutUndoReportsAConflictAndKeepsTheOtherEdit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rolledOut(t, e)
	cn := e.conn()
	spec, revs, err := readHistory(t.Context(), cn, "web")
	if err != nil {
		t.Fatal(err)
	}
	// someone else applies demo-task:3 between undo's read and its write
	other := e.get("web")
	withImage(other.Controller, "demo-task:3")
	if _, err := e.store.UpdateController(t.Context(), other.Controller, other.ModRevision); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	c := e.cli(&stdout, &stderr)

	err = c.undoAt(t.Context(), cn, spec, revs, runningHash(spec, nil), 0)

	assertFails(t, result{err: err}, `controller "web" was changed by someone else since it was read; nothing written, run rollout undo again`)
	if got := e.get("web").Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image; got != "demo-task:3" {
		t.Errorf("stored image %q, want the other edit's demo-task:3", got)
	}
}

func TestRolloutUndoOfAPausedControllerWarns(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := withImage(newController("web", 3), "demo-task:2")
	rc.DesiredState.Paused = true
	e.create(rc)
	record(t, e, 10, "demo-task:1", time.Hour)

	r := e.runCLI("rollout", "undo", "web")

	assertStdout(t, r, "web rolled back to revision 1\n")
	assertContains(t, r.stderr, "warning: web is paused")
}

func TestRolloutUndoAfterALeadersRollbackWritesTheTemplateThatRuns(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rolledBack(t, e)

	r := e.runCLI("rollout", "undo", "web")

	// not revision 2, the newest other than the spec's: it never completed,
	// and nothing runs it
	assertStdout(t, r, "web rolled back to revision 1\n")
	if got := e.get("web").Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image; got != "demo-task:1" {
		t.Errorf("stored image %q, want demo-task:1, which the leader restored", got)
	}
}
