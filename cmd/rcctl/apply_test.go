package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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
			name: "mistyped field",
			input: func() string {
				return strings.Replace(valid(), `"replicas": 3`, `"replicass": 3`, 1)
			},
			wants: []string{`unknown field "desiredState.replicass" (did you mean "replicas"?)`},
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

// TestApplyOfTheREADMEsBadSpecNamesReplicasFirst: the README's broken
// spec is refused for its negative replicas, the point of the example,
// before what else it lacks.
func TestApplyOfTheREADMEsBadSpecNamesReplicasFirst(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run(`{"id":"bad","desiredState":{"replicas":-1}}`, "apply", "-f", "-")

	assertFails(t, r, `controller "bad" is invalid (nothing written): desiredState.replicas: must be between 0 and 1000, got -1; desiredState.replicasInSet: must not be empty`)
}

func TestApplyReportsConflictWhenChangedSinceRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	e.create(newController("web", 3))
	read := e.get("web") // what apply read
	other := newController("web", 7)
	other.Labels["edited-by"] = "someone-else"
	if _, err := e.store.UpdateController(ctx, other, read.ModRevision); err != nil {
		t.Fatalf("concurrent edit: %v", err)
	}

	_, err := applyAll(ctx, e.conn(), []applyItem{{newController("web", 5), &read}})

	want := `controller "web" was changed by someone else since it was read; nothing written, run apply again`
	if err == nil || err.Error() != want {
		t.Fatalf("applyAll error %v, want %q", err, want)
	}
	got := e.get("web").Controller
	if got.DesiredState.Replicas != 7 || got.Labels["edited-by"] != "someone-else" {
		t.Errorf("stored spec replicas %d labels %v, want the other edit (7, edited-by) to survive", got.DesiredState.Replicas, got.Labels)
	}
}

func TestApplyReportsConflictWhenCreatedSinceRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	e.create(newController("web", 7)) // created after apply found no key

	_, err := applyAll(ctx, e.conn(), []applyItem{{newController("web", 5), nil}})

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

	assertFails(t, r, `stdin, items[1]: controller "api" is invalid`, "desiredState.replicas", "nothing written")
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

func TestApplyWithoutAPublishedPolicyLeavesSecurityPolicyToTheManager(t *testing.T) {
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

// TestDecodeApplyIsAsStrictForListItemsAsForOneSpec: a spec that api.Decode
// refuses alone is refused as an item of a list too, with the same error,
// in JSON and in YAML.
func TestDecodeApplyIsAsStrictForListItemsAsForOneSpec(t *testing.T) {
	t.Parallel()
	valid := encode(t, newController("web", 3))
	for _, tt := range []struct{ name, from, to string }{
		{"duplicate field", `"replicas": 3`, `"replicas": 3, "replicas": 4`},
		{"unknown field", `"replicas": 3`, `"replicas": 3, "replica": 4`},
		{"mistyped field", `"replicas": 3`, `"replicas": "3"`},
		{"duplicate label", `"name": "web"`, `"name": "web", "name": "api"`},
	} {
		t.Run("JSON "+tt.name, func(t *testing.T) {
			spec := strings.Replace(valid, tt.from, tt.to, 1)
			_, alone := decodeApply([]byte(spec))
			if alone == nil {
				t.Fatalf("decodeApply accepts the spec alone:\n%s", spec)
			}
			_, err := decodeApply([]byte(`{"items": [` + valid + `, ` + spec + `]}`))
			if want := "items[1]: " + alone.Error(); err == nil || err.Error() != want {
				t.Errorf("decodeApply of the list = %v, want %s", err, want)
			}
		})
	}

	yamlSpec := func(indent, extra string) string {
		return strings.ReplaceAll(`id: web
desiredState:
  replicas: 3
  `+extra+`
  replicasInSet: {name: web}
`, "\n", "\n"+indent)
	}
	for _, tt := range []struct{ name, extra, want string }{
		{"duplicate field", "replicas: 4", `key "replicas" already set in map`},
		{"unknown field", "replica: 4", `unknown field "desiredState.replica"`},
		{"mistyped field", "minReadySeconds: soon", `desiredState.minReadySeconds: cannot unmarshal string into int`},
	} {
		t.Run("YAML "+tt.name, func(t *testing.T) {
			spec := yamlSpec("", tt.extra)
			if _, err := decodeApply([]byte(spec)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decodeApply of the spec alone = %v, want an error with %q", err, tt.want)
			}
			list := "items:\n- " + yamlSpec("  ", tt.extra)
			if _, err := decodeApply([]byte(list)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decodeApply of the list = %v, want an error with %q\n%s", err, tt.want, list)
			}
		})
	}

	t.Run("items twice", func(t *testing.T) {
		list := `{"items": [` + valid + `], "items": [` + valid + `]}`
		if rcs, err := decodeApply([]byte(list)); err == nil || !strings.Contains(err.Error(), `duplicate field "items"`) {
			t.Errorf("decodeApply = %d controllers, %v; want a duplicate field error", len(rcs), err)
		}
	})
	t.Run("a valid list in JSON and YAML", func(t *testing.T) {
		api2 := encode(t, newController("api", 1))
		for _, list := range []string{
			`{"items": [` + valid + `, ` + api2 + `]}`,
			"items:\n- id: web\n  desiredState: {replicas: 3}\n- id: api\n",
		} {
			rcs, err := decodeApply([]byte(list))
			if err != nil || len(rcs) != 2 || rcs[0].ID != "web" || rcs[1].ID != "api" {
				t.Errorf("decodeApply = %d controllers, %v; want web and api\n%s", len(rcs), err, list)
			}
		}
	})
}

// endless is an input that never ends, counting what was read of it.
type endless struct{ read int }

func (r *endless) Read(p []byte) (int, error) {
	if r.read > 64<<20 { // a backstop, so that a reader without a limit ends too
		return 0, fmt.Errorf("read %d bytes of an endless input", r.read)
	}
	for i := range p {
		p[i] = ' '
	}
	r.read += len(p)
	return len(p), nil
}

func TestApplyReadsAtMostTheSpecLimitFromStdin(t *testing.T) {
	t.Parallel()
	in := &endless{}
	c := newCLI(in, &bytes.Buffer{}, &bytes.Buffer{})

	_, err := c.readInput("-")

	want := fmt.Sprintf("stdin: larger than %d bytes (256 KiB), the most a spec may be", api.MaxSpecBytes)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("readInput = %v, want an error with %q", err, want)
	}
	if in.read > 2*api.MaxSpecBytes {
		t.Errorf("read %d bytes of stdin, want at most about the limit of %d", in.read, api.MaxSpecBytes)
	}
}

func TestApplyOfFileOverTheSpecLimitFailsNamingFileAndLimit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // sparse: cheap to make, costly to read whole
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	before := e.revision()

	r := e.run("", "apply", "-f", path)

	assertFails(t, r, fmt.Sprintf("%s: larger than %d bytes (256 KiB), the most a spec may be", path, api.MaxSpecBytes), "nothing written")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestApplyOfFileAtTheSpecLimitIsRead(t *testing.T) {
	t.Parallel()
	spec := encode(t, newController("web", 3))
	padded := spec + strings.Repeat(" ", api.MaxSpecBytes-len(spec))
	path := writeFile(t, "web.json", padded)
	c := newCLI(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})

	data, err := c.readInput(path)

	if err != nil || len(data) != api.MaxSpecBytes {
		t.Errorf("readInput = %d bytes, %v; want all %d", len(data), err, api.MaxSpecBytes)
	}
}
