package main

import (
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// hostPortPath is the field a host port is refused at in the test's
// controllers.
const hostPortPath = "desiredState.taskTemplate.desiredState.manifest.containers[0].ports[0].hostPort"

// publish stores p as a leader would, without an election.
func (e *testEnv) publish(p registry.Policy) {
	e.t.Helper()
	if err := e.store.PublishPolicy(e.t.Context(), nil, p); err != nil {
		e.t.Fatalf("publish policy: %v", err)
	}
}

// withHostPort is rc publishing its port on the host.
func withHostPort(rc *api.ReplicationController) *api.ReplicationController {
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports[0].HostPort = 8080
	return rc
}

func TestApplyRefusesWhatThePublishedPolicyRefusesNamingFieldAndFlag(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.publish(registry.NewPolicy(api.SecurityPolicy{}, api.DefaultMaxReplicas, "rm-1"))
	privileged := newController("db", 1)
	privileged.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Privileged = true
	good := writeFile(t, "good.json", encode(t, newController("api", 1)))
	before := e.revision()

	r := e.run(encode(t, withHostPort(newController("web", 1))), "apply", "-f", "-")
	assertFails(t, r, `stdin: controller "web" is refused by the manager's policy (nothing written): `+
		hostPortPath+": refused: the manager was not started with --allow-host-ports")
	r = e.run(encode(t, privileged), "apply", "-f", good, "-f", "-")
	assertFails(t, r, `stdin: controller "db" is refused by the manager's policy (nothing written)`,
		"containers[0].privileged: refused: the manager was not started with --allow-privileged")
	r = e.run(encode(t, withHostPort(newController("web", 1))), "apply", "-f", "-", "--dry-run")
	assertFails(t, r, "refused: the manager was not started with --allow-host-ports")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: a refused apply wrote", before, after)
	}

	// a leader that allows host ports: the same spec goes in
	e.publish(registry.NewPolicy(api.SecurityPolicy{AllowHostPorts: true}, api.DefaultMaxReplicas, "rm-2"))
	r = e.run(encode(t, withHostPort(newController("web", 1))), "apply", "-f", "-")
	assertStdout(t, r, "controller \"web\" created\n")
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing", r.stderr)
	}
}

func TestRunRefusesAHostPortThePublishedPolicyRefuses(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.publish(registry.NewPolicy(api.SecurityPolicy{}, api.DefaultMaxReplicas, "rm-1"))

	r := e.run("", "run", "web", "--image", "demo-task:latest", "--port", "8080:80")

	assertFails(t, r, `controller "web" is refused by the manager's policy (nothing written): `+
		"desiredState.taskTemplate.desiredState.manifest.containers[0].ports[0].hostPort: refused: the manager was not started with --allow-host-ports")
	assertNotFound(t, e, "web")
	assertStdout(t, e.run("", "run", "web", "--image", "demo-task:latest", "--port", "80"), "controller \"web\" created\n")
}

func TestRolloutUndoRefusesATemplateThePublishedPolicyRefuses(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 2), "demo-task:2"))
	tmpl := withHostPort(withImage(newController("web", 1), "demo-task:1")).DesiredState.TaskTemplate
	old := api.Revision{Revision: 10, FirstSeen: e.now.Add(-time.Hour), TemplateHash: api.TemplateHash(&tmpl), TaskTemplate: tmpl}
	if err := e.store.PutRevision(t.Context(), "web", &old); err != nil {
		t.Fatal(err)
	}
	record(t, e, 11, "demo-task:2", 30*time.Minute)
	e.publish(registry.NewPolicy(api.SecurityPolicy{}, api.DefaultMaxReplicas, "rm-1"))
	before := e.get("web").ModRevision

	r := e.runCLI("rollout", "undo", "web")

	assertFails(t, r, `controller "web" is refused by the manager's policy with the template of revision 1 (nothing written): `+
		hostPortPath+": refused: the manager was not started with --allow-host-ports")
	if after := e.get("web").ModRevision; after != before {
		t.Errorf("ModRevision moved from %d to %d: a refused undo wrote", before, after)
	}
}

// TestTheReplicaLimitIsThePublishedMaxReplicas: the policy's limit
// refuses more, naming the manager's flag, in apply and scale; it also
// allows more than rcctl's own default; and a --max-replicas given to
// rcctl that is lower still applies.
func TestTheReplicaLimitIsThePublishedMaxReplicas(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.publish(registry.NewPolicy(api.SecurityPolicy{}, 50, "rm-1"))
	e.create(newController("web", 3))

	r := e.run(encode(t, newController("api", 60)), "apply", "-f", "-")
	assertFails(t, r, `controller "api" is refused by the manager's policy (nothing written): desiredState.replicas: refused: the manager was started with --max-replicas 50, got 60`)
	r = e.run("", "scale", "web", "--replicas", "51")
	assertFails(t, r, `controller "web" is refused by the manager's policy after scaling (nothing written): desiredState.replicas: refused: the manager was started with --max-replicas 50, got 51`)
	assertStdout(t, e.run("", "scale", "web", "--replicas", "50"), "controller \"web\" scaled to 50\n")

	e.publish(registry.NewPolicy(api.SecurityPolicy{}, 5000, "rm-2"))
	assertStdout(t, e.run(encode(t, newController("api", 2000)), "apply", "-f", "-"), "controller \"api\" created\n")
	r = e.run("", "--max-replicas", "10", "scale", "web", "--replicas", "20")
	assertFails(t, r, `controller "web" is invalid after scaling (nothing written): desiredState.replicas: must be between 0 and 10, got 20`)
	r = e.run("", "scale", "web", "--replicas", "-1")
	assertFails(t, r, "desiredState.replicas: must be between 0 and 5000, got -1")
}

// TestWithoutAPublishedPolicyApplyWritesAsBefore: no leader has published
// (or the managers are older): a host port is the manager's to refuse,
// and rcctl says nothing about it.
func TestWithoutAPublishedPolicyApplyWritesAsBefore(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run(encode(t, withHostPort(newController("web", 1))), "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" created\n")
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing", r.stderr)
	}
	r = e.run(encode(t, newController("api", 1001)), "apply", "-f", "-")
	assertFails(t, r, "desiredState.replicas: must be between 0 and 1000, got 1001")
}

// TestAPolicyThatDoesNotDecodeIsAWarningAndTheShapeIsChecked: rcctl warns,
// names the key, and writes as without a policy.
func TestAPolicyThatDoesNotDecodeIsAWarningAndTheShapeIsChecked(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	if _, err := e.client.Put(t.Context(), e.store.PolicyKey(), "{not json"); err != nil {
		t.Fatal(err)
	}

	r := e.run(encode(t, withHostPort(newController("web", 1))), "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" created\n")
	assertContains(t, r.stderr, "warning: the manager's policy cannot be read", "/registry/meta/policy")
	if n := strings.Count(r.stderr, "\n"); n != 1 {
		t.Errorf("stderr has %d lines, want the one warning:\n%s", n, r.stderr)
	}
}
