package main

import (
	"context"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestApplyCreatesController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	path := writeFile(t, "web.json", encode(t, newController("web", 3)))

	r := e.run("", "apply", "-f", path)

	assertStdout(t, r, "controller \"web\" created\n")
	if got := e.get("web").Controller.DesiredState.Replicas; got != 3 {
		t.Errorf("stored replicas %d, want 3", got)
	}
}

func TestApplyReadsYAMLFromStdin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	yaml := `id: web
labels: {name: web}
desiredState:
  replicas: 2
  replicasInSet: {name: web}
  taskTemplate:
    labels: {name: web}
    desiredState:
      manifest:
        version: v1beta1
        containers:
        - name: web
          image: demo-task:latest
          command: /task --listen :8080
`
	r := e.run(yaml, "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" created\n")
	got := e.get("web").Controller
	if got.DesiredState.Replicas != 2 || got.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command[1] != "--listen" {
		t.Errorf("stored spec %+v, want replicas 2 and the command split on spaces", got.DesiredState)
	}
}

func TestApplyConfiguresChangedController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := e.create(newController("web", 3))
	path := writeFile(t, "web.json", encode(t, newController("web", 5)))

	r := e.run("", "apply", "-f", path)

	assertStdout(t, r, "controller \"web\" configured\n")
	spec := e.get("web")
	if spec.Controller.DesiredState.Replicas != 5 {
		t.Errorf("stored replicas %d, want 5", spec.Controller.DesiredState.Replicas)
	}
	if spec.ModRevision <= rev {
		t.Errorf("ModRevision %d, want above %d", spec.ModRevision, rev)
	}
}

func TestApplyOfIdenticalSpecIsUnchangedAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	path := writeFile(t, "web.json", encode(t, newController("web", 3)))
	before := e.revision()

	r := e.run("", "apply", "-f", path)

	assertStdout(t, r, "controller \"web\" unchanged\n")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: apply wrote", before, after)
	}
}

func TestApplyRefusesInvalidSpecsAndWritesNothing(t *testing.T) {
	t.Parallel()
	valid := func() string { return encode(t, newController("web", 3)) }
	mutated := func(mutate func(rc *api.ReplicationController)) func() string {
		return func() string {
			rc := newController("web", 3)
			mutate(rc)
			return encode(t, rc)
		}
	}
	tests := []struct {
		name  string
		input func() string
		wants []string
	}{
		{
			name:  "negative replicas",
			input: mutated(func(rc *api.ReplicationController) { rc.DesiredState.Replicas = -1 }),
			wants: []string{"desiredState.replicas: must be between 0 and 1000, got -1"},
		},
		{
			name: "unknown field",
			input: func() string {
				return strings.Replace(valid(), `"replicas": 3`, `"replicas": 3, "replica": 4`, 1)
			},
			wants: []string{`unknown field "desiredState.replica"`},
		},
		{
			name:  "broken JSON",
			input: func() string { return strings.TrimSuffix(strings.TrimSpace(valid()), "}") },
			wants: []string{"invalid JSON"},
		},
		{
			name: "selector not in template labels",
			input: mutated(func(rc *api.ReplicationController) {
				rc.DesiredState.ReplicasInSet = map[string]string{"name": "web", "tier": "frontend"}
			}),
			wants: []string{"desiredState.taskTemplate.labels", `"tier"`},
		},
		{
			name:  "id with bad characters",
			input: mutated(func(rc *api.ReplicationController) { rc.ID = "web/../x" }),
			wants: []string{"id: must consist of letters"},
		},
		{
			name: "reserved label prefix",
			input: mutated(func(rc *api.ReplicationController) {
				rc.DesiredState.TaskTemplate.Labels["replicationController.slot"] = "1"
			}),
			wants: []string{`desiredState.taskTemplate.labels["replicationController.slot"]`, "reserved prefix"},
		},
		{
			name:  "empty input",
			input: func() string { return "" },
			wants: []string{"empty input"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			e.create(newController("web", 3))
			before := e.revision()

			r := e.run(tt.input(), "apply", "-f", "-")

			assertFails(t, r, append(tt.wants, "nothing written")...)
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if after := e.revision(); after != before {
				t.Errorf("etcd revision moved from %d to %d: an invalid spec was written", before, after)
			}
		})
	}
}

func TestApplyReportsConflictWhenChangedSinceRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.create(newController("web", 3))
	read := e.get("web") // what apply read
	other := newController("web", 7)
	other.Labels["edited-by"] = "someone-else"
	if _, err := e.store.UpdateController(ctx, other, read.ModRevision); err != nil {
		t.Fatalf("concurrent edit: %v", err)
	}

	_, err := applyAt(ctx, e.conn(), newController("web", 5), &read)

	want := `controller "web" was changed by someone else since it was read; nothing written, run apply again`
	if err == nil || err.Error() != want {
		t.Fatalf("applyAt error %v, want %q", err, want)
	}
	got := e.get("web").Controller
	if got.DesiredState.Replicas != 7 || got.Labels["edited-by"] != "someone-else" {
		t.Errorf("stored spec replicas %d labels %v, want the other edit (7, edited-by) to survive", got.DesiredState.Replicas, got.Labels)
	}
}

func TestApplyReportsConflictWhenCreatedSinceRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.create(newController("web", 7)) // created after apply found no key

	_, err := applyAt(ctx, e.conn(), newController("web", 5), nil)

	assertFails(t, result{err: err}, `controller "web" was changed by someone else since it was read; nothing written`)
	if got := e.get("web").Controller.DesiredState.Replicas; got != 7 {
		t.Errorf("stored replicas %d, want the other writer's 7", got)
	}
}

func TestApplyOfListValidatesEveryItemBeforeWriting(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	bad := newController("api", 3)
	bad.DesiredState.Replicas = 5000
	list := `{"items": [` + encode(t, newController("web", 3)) + `,` + encode(t, bad) + `]}`
	before := e.revision()

	r := e.run(list, "apply", "-f", "-")

	assertFails(t, r, `items[1] (controller "api")`, "desiredState.replicas", "nothing written")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: part of an invalid list was written", before, after)
	}
}

func TestApplyOfMissingFileFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	r := e.run("", "apply", "-f", "/nonexistent/web.json")
	assertFails(t, r, "/nonexistent/web.json")
}

func TestApplyLeavesSecurityPolicyToTheManager(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := newController("web", 1)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Privileged = true

	r := e.run(encode(t, rc), "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" created\n")
	if !e.get("web").Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Privileged {
		t.Error("stored spec lost privileged")
	}
}
