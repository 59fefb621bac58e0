package main

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestScaleSetsReplicasAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.run("", "scale", "web", "--replicas", "5")

	assertStdout(t, r, "controller \"web\" scaled to 5\n")
	want := newController("web", 5)
	if got := encode(t, e.get("web").Controller); got != encode(t, want) {
		t.Errorf("stored spec:\n%s\nwant:\n%s", got, encode(t, want))
	}
}

func TestScaleToSameReplicasWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	before := e.revision()

	r := e.run("", "scale", "--replicas=3", "web")

	assertStdout(t, r, "controller \"web\" scaled to 3\n")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestScaleRequiresReplicas(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.run("", "scale", "web")

	assertFails(t, r, "--replicas is required")
	if got := exitCode(r.err); got != 2 {
		t.Errorf("exit code %d, want 2", got)
	}
}

func TestScaleRefusesReplicasOutOfRangeAndWritesNothing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"negative", []string{"scale", "web", "--replicas", "-1"}, "desiredState.replicas: must be between 0 and 1000, got -1"},
		{"above --max-replicas", []string{"--max-replicas", "10", "scale", "web", "--replicas", "11"}, "desiredState.replicas: must be between 0 and 10, got 11"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			e.create(newController("web", 3))
			before := e.revision()

			r := e.run("", tt.args...)

			assertFails(t, r, tt.want, "nothing written")
			if after := e.revision(); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
}

func TestScaleUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "scale", "nope", "--replicas", "2")

	assertFails(t, r, `controller "nope" not found`)
}

func TestScaleRetriesOnConflictAndKeepsTheOtherEdit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	e.create(newController("web", 3))
	calls := 0

	err := readModifyWrite(ctx, e.conn(), "web", func(rc *api.ReplicationController) error {
		calls++
		if calls == 1 {
			// Someone else edits the spec between scale's read and write.
			other := e.get("web")
			other.Controller.Labels["edited-by"] = "someone-else"
			if _, err := e.store.UpdateController(ctx, other.Controller, other.ModRevision); err != nil {
				t.Fatalf("concurrent edit: %v", err)
			}
		}
		rc.DesiredState.Replicas = 6
		return nil
	})

	if err != nil {
		t.Fatalf("readModifyWrite: %v", err)
	}
	if calls != 2 {
		t.Errorf("modify called %d times, want 2 (one conflict, one retry)", calls)
	}
	got := e.get("web").Controller
	if got.DesiredState.Replicas != 6 || got.Labels["edited-by"] != "someone-else" {
		t.Errorf("stored replicas %d labels %v, want 6 and the other edit kept", got.DesiredState.Replicas, got.Labels)
	}
}

func TestScaleGivesUpAfterThreeConflicts(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	e.create(newController("web", 3))
	calls := 0

	err := readModifyWrite(ctx, e.conn(), "web", func(rc *api.ReplicationController) error {
		calls++
		other := e.get("web")
		other.Controller.DesiredState.Replicas = 100 + calls
		if _, err := e.store.UpdateController(ctx, other.Controller, other.ModRevision); err != nil {
			t.Fatalf("concurrent edit: %v", err)
		}
		rc.DesiredState.Replicas = 6
		return nil
	})

	assertFails(t, result{err: err}, `controller "web" was changed by someone else on each of 3 attempts; gave up, nothing written`)
	if calls != 3 {
		t.Errorf("modify called %d times, want 3", calls)
	}
	if got := e.get("web").Controller.DesiredState.Replicas; got != 103 {
		t.Errorf("stored replicas %d, want the last other edit (103)", got)
	}
}
