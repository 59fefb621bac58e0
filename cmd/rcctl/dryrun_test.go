package main

import (
	"errors"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// running gives the fake Docker web's containers in slots 1..n, running
// for an hour, made from rc's template by this registry (registryID; ""
// for containers of before the registry label).
func running(t *testing.T, e *testEnv, rc *api.ReplicationController, registryID string, n int) {
	t.Helper()
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	for slot := 1; slot <= n; slot++ {
		labels := map[string]string{"name": rc.ID, api.LabelController: rc.ID, api.LabelSlot: strconv.Itoa(slot), api.LabelTemplateHash: hash}
		if registryID != "" {
			labels[api.LabelRegistry] = registryID
		}
		addContainer(t, e, rc.ID+"-"+strconv.Itoa(slot), labels, api.StateRunning, "", e.now.Add(-time.Hour))
	}
}

// withRegistryID stores this registry's id, as the first manager does.
func withRegistryID(t *testing.T, e *testEnv) string {
	t.Helper()
	id, err := e.store.RegistryID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// assertNothingWritten fails when etcd moved past revision before, or a
// key the manager writes (status, events, history) exists.
func assertNothingWritten(t *testing.T, e *testEnv, before int64) {
	t.Helper()
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: the dry run wrote", before, after)
	}
	for _, prefix := range []string{"/registry/status/", "/registry/events/", "/registry/history/"} {
		resp, err := e.client.Get(t.Context(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 0 {
			t.Errorf("%d key(s) under %s after a dry run", resp.Count, prefix)
		}
	}
}

func TestApplyDryRunOfANewImageShowsEachReplacementAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	reg := withRegistryID(t, e)
	old := newController("web", 3)
	e.create(old)
	running(t, e, old, reg, 3)
	modRev := e.get("web").ModRevision
	before := e.revision()
	updated := withImage(newController("web", 3), "demo-task:2")
	oldHash, newHash := api.TemplateHash(&old.DesiredState.TaskTemplate), api.TemplateHash(&updated.DesiredState.TaskTemplate)

	r := e.runCLI("apply", "-f", writeFile(t, "web.json", encode(t, updated)), "--dry-run")

	detail := " (template " + oldHash + " → " + newHash + ", stopped first)\n"
	assertStdout(t, r, ""+
		"controller \"web\" configured (dry run)\n"+
		"web-3: would be replaced"+detail+
		"web-2: would be replaced"+detail+
		"web-1: would be replaced"+detail+
		"dry run: 3 to replace (nothing written)\n")
	assertNothingWritten(t, e, before)
	if got := e.get("web"); got.ModRevision != modRev || got.Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image != "demo-task:latest" {
		t.Errorf("spec at revision %d with image %q, want it untouched", got.ModRevision, got.Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image)
	}
}

func TestApplyDryRunOfANewControllerShowsTheCreates(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	before := e.revision()

	r := e.runCLI("apply", "-f", writeFile(t, "web.json", encode(t, newController("web", 2))), "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" created (dry run)\n"+
		"web-1: would be created\n"+
		"web-2: would be created\n"+
		"dry run: 2 to create (nothing written)\n")
	assertNothingWritten(t, e, before) // nor the registry id
	assertNotFound(t, e, "web")
}

func TestApplyDryRunOfTheSameSpecShowsNoChange(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	reg := withRegistryID(t, e)
	rc := newController("web", 3)
	e.create(rc)
	running(t, e, rc, reg, 3)
	before := e.revision()

	r := e.runCLI("apply", "-f", writeFile(t, "web.json", encode(t, rc)), "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" unchanged (dry run)\n"+
		"dry run: no change (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestScaleDryRunShowsTheRemovesAndCreates(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		replicas string
		want     string
	}{
		{"down", "3", "" +
			"controller \"web\" scaled to 3 (dry run)\n" +
			"web-5: would be removed (scale to 3)\n" +
			"web-4: would be removed (scale to 3)\n" +
			"dry run: 2 to remove (nothing written)\n"},
		{"up", "6", "" +
			"controller \"web\" scaled to 6 (dry run)\n" +
			"web-6: would be created\n" +
			"dry run: 1 to create (nothing written)\n"},
		{"to the same", "5", "" +
			"controller \"web\" scaled to 5 (dry run)\n" +
			"dry run: no change (nothing written)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			rc := newController("web", 5)
			e.create(rc)
			running(t, e, rc, "", 5) // made before the registry id
			before := e.revision()

			r := e.runCLI("scale", "web", "--replicas", tt.replicas, "--dry-run")

			assertStdout(t, r, tt.want)
			assertNothingWritten(t, e, before)
		})
	}
}

func TestDryRunRefusesAnInvalidSpecAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	before := e.revision()

	r := e.runCLI("scale", "web", "--replicas", "-1", "--dry-run")

	assertFails(t, r, "desiredState.replicas: must be between 0 and 1000, got -1", "nothing written")
	assertNothingWritten(t, e, before)
}

func TestDryRunWithDockerUnavailableFailsAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	e.docker.ListErr = func() error { return errors.New("Cannot connect to the Docker daemon") }
	before := e.revision()

	r := e.runCLI("scale", "web", "--replicas", "4", "--dry-run")

	assertFails(t, r, `dry run of controller "web": containers unavailable (nothing written)`, "Cannot connect to the Docker daemon")
	assertNothingWritten(t, e, before)
}

func TestDryRunAndWaitDoNotGoTogether(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"apply", "-f", "web.json", "--dry-run", "--wait"},
		{"scale", "web", "--replicas", "2", "--dry-run", "--wait"},
	} {
		r := runOffline(t, args...)
		assertFails(t, r, "--dry-run writes nothing to wait for")
		if got := exitCode(r.err); got != 2 {
			t.Errorf("%q: exit code %d, want 2", args, got)
		}
	}
}
