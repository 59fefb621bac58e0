package main

import (
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// TestGetJSONWithStatusRoundTripsThroughApplyWithoutAWrite: the output of
// get, status included, applied back, is unchanged: the spec key's
// ModRevision and etcd's revision stay where they were, for one
// controller and for the list, in JSON and in YAML.
func TestGetJSONWithStatusRoundTripsThroughApplyWithoutAWrite(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"get", "web", "-o", "json"}, {"get", "web", "-o", "yaml"}, {"get", "-o", "json"}, {"get", "-o", "yaml"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			withStatus(t, e)
			specRev := e.get("web").ModRevision
			before := e.revision()

			got := e.run("", args...)
			assertOK(t, got)
			assertContains(t, got.stdout, "currentState", "readyReplicas")
			r := e.run(got.stdout, "apply", "-f", "-")

			assertOK(t, r)
			assertContains(t, r.stdout, "controller \"web\" unchanged\n")
			if after := e.get("web").ModRevision; after != specRev {
				t.Errorf("web's ModRevision moved from %d to %d", specRev, after)
			}
			if after := e.revision(); after != before {
				t.Errorf("etcd revision moved from %d to %d: apply wrote", before, after)
			}
		})
	}
}

func TestApplyIgnoresCurrentStateButStaysStrictAboutTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	spec := strings.TrimSuffix(encode(t, newController("web", 3)), "}\n")

	// any value of currentState is ignored: it is the status, not the spec
	r := e.run(spec+`, "currentState": {"replicas": 99, "whatever": [1]}}`, "apply", "-f", "-")
	assertStdout(t, r, "controller \"web\" created\n")
	if n := e.get("web").Controller.DesiredState.Replicas; n != 3 {
		t.Errorf("stored replicas %d, want 3", n)
	}

	// a duplicate or unknown field beside it is refused as without it
	for _, bad := range []string{`, "id": "api", "currentState": {}}`, `, "currentstate": {}}`} {
		r := e.run(spec+bad, "apply", "-f", "-")
		if r.err == nil {
			t.Errorf("apply of %s accepted", bad)
		}
	}
	// in YAML too
	yaml := "id: api\nlabels: {name: api}\ndesiredState:\n  replicas: 1\n  replicasInSet: {name: api}\n" +
		"  taskTemplate:\n    labels: {name: api}\n    desiredState:\n      manifest:\n        containers:\n        - {name: api, image: demo-task:latest}\n" +
		"currentState:\n  replicas: 5\n"
	assertStdout(t, e.run(yaml, "apply", "-f", "-"), "controller \"api\" created\n")
}

func TestOutputNameOnEveryListingCommand(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	twoNodesAndAGoneOne(t, e)
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 12, "demo-task:latest", time.Hour) // web's template now

	assertStdout(t, e.runCLI("get", "-o", "name"), "controller/api\ncontroller/web\n")
	assertStdout(t, e.runCLI("get", "web", "-o", "name"), "controller/web\n")
	assertStdout(t, e.runCLI("nodes", "-o", "name"), "node/a\nnode/b\nnode/c\n")
	assertStdout(t, e.runCLI("rollout", "history", "web", "-o", "name"), "revision/1\nrevision/2\n")
}

func TestOutputJSONPathOnEveryListingCommand(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	twoNodesAndAGoneOne(t, e)
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 12, "demo-task:latest", time.Hour) // web's template now

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "web", "-o", "jsonpath={.currentState.readyReplicas}"}, "2\n"},
		{[]string{"get", "web", "-o", "jsonpath={.desiredState.replicas}/{.currentState.conditions[0].reason}"}, "3/CreateFailed\n"},
		{[]string{"get", "-o", `jsonpath={range .items[*]}{.id}={.currentState.replicas}{"\n"}{end}`}, "api=\nweb=3\n"},
		{[]string{"get", "-o", "jsonpath={.items[?(@.id==\"web\")].desiredState.taskTemplate.desiredState.manifest.containers[0].image}"}, "demo-task:latest\n"},
		{[]string{"nodes", "-o", "jsonpath={.items[*].name} {.items[0].status.containers}"}, "a b c 3\n"},
		{[]string{"rollout", "history", "web", "-o", "jsonpath={.items[?(@.current==true)].number}"}, "2\n"},
		{[]string{"rollout", "history", "web", "-o", "jsonpath={.items[?(@.current==true)].revision}"}, "12\n"},
	} {
		r := e.runCLI(tt.args...)
		assertOK(t, r)
		if r.stdout != tt.want {
			t.Errorf("%q printed %q, want %q", tt.args, r.stdout, tt.want)
		}
	}
}

func TestNodesAndRolloutHistoryPrintYAMLAndJSON(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	twoNodesAndAGoneOne(t, e)
	e.create(withImage(newController("web", 1), "demo-task:2"))
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 12, "demo-task:2", time.Hour)

	r := e.runCLI("nodes", "-o", "yaml")
	assertOK(t, r)
	assertContains(t, r.stdout, "items:\n- name: a\n", "  engineID: ENGINE-A\n", "- name: c\n  status:\n    state: NotReady\n")

	r = e.runCLI("rollout", "history", "web", "-o", "json")
	assertOK(t, r)
	assertContains(t, r.stdout, `"number": 1,`, `"revision": 10,`, `"templateHash": "`, `"image": "demo-task:1"`, `"current": false`, `"current": true`)
	r = e.runCLI("rollout", "history", "web", "-o", "yaml")
	assertOK(t, r)
	assertContains(t, r.stdout, "items:\n- number: 1\n  revision: 10\n", "  current: true\n")
}

func TestOutputFormatMistakesAreUsageErrorsNamingTheFormats(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "-o", "xml"}, `get: unknown output format "xml" (want wide, json, yaml, name or jsonpath=TEMPLATE)`},
		{[]string{"get", "-o", "jsonpath="}, "get: -o jsonpath needs a template"},
		{[]string{"get", "-o", "jsonpath={.items["}, "get: -o jsonpath: template"},
		{[]string{"get", "-o", "name=x"}, "get: -o name takes no =TEMPLATE"},
		{[]string{"rollout", "history", "web", "-o", "xml"}, `rollout history: unknown output format "xml" (want wide, json, yaml, name or jsonpath=TEMPLATE)`},
	} {
		r := runOffline(t, tt.args...)
		assertFails(t, r, tt.want)
		if r.err != nil && exitCode(r.err) != 2 {
			t.Errorf("%q: exit %d, want 2", tt.args, exitCode(r.err))
		}
	}
}

func TestGetSelectorListsTheControllersWhoseLabelsHoldEveryPair(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	web := newController("web", 3)
	web.Labels = map[string]string{"name": "web", "tier": "front", "env": "prod"}
	api1 := newController("api", 1)
	api1.Labels = map[string]string{"name": "api", "tier": "back", "env": "prod"}
	// the selector and the template say tier=front, the controller's own
	// labels do not: -l looks at the controller's labels only
	other := newController("other", 1)
	other.DesiredState.ReplicasInSet["tier"] = "front"
	other.DesiredState.TaskTemplate.Labels["tier"] = "front"
	for _, rc := range []*api.ReplicationController{web, api1, other} {
		e.create(rc)
	}
	e.putRaw("broken", `not json`)

	assertStdout(t, e.runCLI("get", "-l", "tier=front", "-o", "name"), "controller/web\n")
	assertStdout(t, e.runCLI("get", "-l", "env=prod", "-o", "name"), "controller/api\ncontroller/web\n")
	assertStdout(t, e.runCLI("get", "--selector", "env=prod,tier=back", "-o", "name"), "controller/api\n")
	assertStdout(t, e.runCLI("get", "-l", "env=prod", "-o", "jsonpath={.items[*].id}"), "api web\n")
	r := e.runCLI("get", "-l", "env=prod")
	assertOK(t, r)
	assertRows(t, r.stdout, [][]string{
		{"ID", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "STATUS", "AGE", "IMAGE"},
		{"api", "1", "<none>", "<none>", "<none>", "Pending", "<unknown>", "demo-task:latest"},
		{"web", "3", "<none>", "<none>", "<none>", "Pending", "<unknown>", "demo-task:latest"},
	})
	r = e.runCLI("get", "-l", "env=dev")
	assertStdout(t, r, "")
	assertContains(t, r.stderr, "No controllers found.")
	// the undecodable spec has no labels: it is not selected, and its
	// absence is no error
	r = e.runCLI("get", "-l", "env=prod", "-o", "json")
	assertOK(t, r)
	if strings.Contains(r.stdout+r.stderr, "broken") {
		t.Errorf("the undecodable spec shows:\n%s%s", r.stdout, r.stderr)
	}

	for _, args := range [][]string{{"get", "web", "-l", "env=prod"}, {"get", "-l", "env"}, {"get", "-l", "a=b,a=c"}} {
		r := runOffline(t, args...)
		assertFails(t, r, "get:")
		if r.err != nil && exitCode(r.err) != 2 {
			t.Errorf("%q: exit %d, want 2", args, exitCode(r.err))
		}
	}
}

// ctlviewYAML is a spec as get -o yaml prints it.
func ctlviewYAML(rc *api.ReplicationController) (string, error) {
	data, err := api.EncodeYAML(rc)
	return string(data), err
}
