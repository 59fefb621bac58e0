package e2e

// What scripts and operators rely on, with the built programs: rcctl get
// -o json carries the status and applies back unchanged, run stores the
// command after -- word for word, /metrics says per controller how many
// are ready, the endpoints refuse a Host they do not serve, and rcctl
// refuses up front what the daemon's flags refuse.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
)

// specRevision is the ModRevision of id's spec in the daemon's etcd.
func specRevision(t *testing.T, d *daemon, id string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	spec, err := registry.NewStore(etcdClient(t, d.etcdURL), "").GetController(ctx, id)
	if err != nil {
		t.Fatalf("spec of %s: %v", id, err)
	}
	return spec.ModRevision
}

// TestGetJSONCarriesTheStatusAndAppliesBackUnchanged: of a running
// controller, get -o json has currentState.readyReplicas; that same output
// applied is reported unchanged and leaves the spec's ModRevision where it
// was; and /metrics has the controller's ready count.
func TestGetJSONCarriesTheStatusAndAppliesBackUnchanged(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("roundtrip")

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	waitForReplicas(t, cli, id, 2)
	var out string
	testpoll.Eventually(t, 60*time.Second, func() error {
		out = d.rcctl(t, "", "get", id, "-o", "json")
		var doc struct {
			CurrentState *struct {
				ReadyReplicas *int `json:"readyReplicas"`
			} `json:"currentState"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			return fmt.Errorf("get -o json: %w:\n%s", err, out)
		}
		if doc.CurrentState == nil || doc.CurrentState.ReadyReplicas == nil || *doc.CurrentState.ReadyReplicas != 2 {
			return fmt.Errorf("currentState.readyReplicas is not 2 yet:\n%s", out)
		}
		return nil
	})

	before := specRevision(t, d, id)
	if got := d.rcctl(t, out, "apply", "-f", "-"); got != fmt.Sprintf("controller %q unchanged\n", id) {
		t.Errorf("apply of get's output printed %q, want unchanged", got)
	}
	if after := specRevision(t, d, id); after != before {
		t.Errorf("the spec's ModRevision moved from %d to %d on an unchanged apply", before, after)
	}

	series := `replication_manager_controller_replicas_ready{controller="` + id + `"} 2`
	testpoll.Eventually(t, 30*time.Second, func() error {
		if metrics := httpGet(t, "http://"+d.metricsAddr+"/metrics"); !strings.Contains(metrics, series) {
			return fmt.Errorf("/metrics has no %s", series)
		}
		return nil
	})
}

// TestRunStoresTheCommandAfterTheDashesWordForWord: the quoted ':8080'
// arrives as the shell gives it, one word, and nothing is split again.
func TestRunStoresTheCommandAfterTheDashesWordForWord(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	dockertest.RequireDocker(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("argv")
	args := []string{"run", id, "--image", "demo-task:latest", "--replicas", "0", "--label", "name=" + id}
	for k, v := range labels {
		args = append(args, "--label", k+"="+v)
	}
	// as a shell passes `-- /task --listen ':8080'`
	d.rcctl(t, "", append(args, "--", "/task", "--listen", ":8080")...)

	out := d.rcctl(t, "", "get", id, "-o", "json")
	var rc api.ReplicationController
	if err := json.Unmarshal([]byte(out), &struct {
		*api.ReplicationController
		CurrentState json.RawMessage `json:"currentState"`
	}{ReplicationController: &rc}); err != nil {
		t.Fatalf("get -o json: %v:\n%s", err, out)
	}
	got := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command
	if want := []string{"/task", "--listen", ":8080"}; !slices.Equal(got, want) {
		t.Errorf("stored command %q, want exactly %q", got, want)
	}
}

// TestEndpointsAnswerAForeignHostWith421: a page of another site that
// reaches the port through DNS rebinding names its own host, and gets
// nothing but 421; the listen address's own host is served.
func TestEndpointsAnswerAForeignHostWith421(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	dockertest.RequireDocker(t)
	d := startDaemon(t)
	for _, path := range []string{"/metrics", "/", "/api/v1/controllers", "/livez"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+d.metricsAddr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s with Host evil.example: %v", path, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host evil.example = %d, want 421", path, resp.StatusCode)
		}
	}
	httpGet(t, "http://"+d.metricsAddr+"/livez") // its own host: 200
}

// TestRcctlRefusesWhatTheDaemonsFlagsRefuse: the daemon publishes its
// policy; a spec with a host port is refused by rcctl naming the field and
// the flag, and nothing is written; the daemon started with
// --allow-host-ports publishes that, and the same spec goes in.
func TestRcctlRefusesWhatTheDaemonsFlagsRefuse(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	dockertest.RequireDocker(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("policy")
	rc := controller(id, "demo-task:latest", 0, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports[0].HostPort = 18080
	waitForPolicy(t, d, func(p registry.Policy) bool { return !p.AllowHostPorts })

	_, err := d.tryRcctl(mustJSON(t, rc), "apply", "-f", "-")
	want := "desiredState.taskTemplate.desiredState.manifest.containers[0].ports[0].hostPort: refused: the manager was not started with --allow-host-ports"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("apply of a host port = %v, want an error containing %q", err, want)
	}
	if _, err := d.tryRcctl("", "get", id); err == nil {
		t.Fatalf("the refused controller was written")
	}

	d.stop(t)
	d.start(t, "--allow-host-ports")
	waitForPolicy(t, d, func(p registry.Policy) bool { return p.AllowHostPorts })
	if out := d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-"); out != fmt.Sprintf("controller %q created\n", id) {
		t.Errorf("apply under --allow-host-ports printed %q, want created", out)
	}
}

// waitForPolicy waits until the daemon's leader has published a policy
// that ok accepts: /readyz may answer before the term has started.
func waitForPolicy(t *testing.T, d *daemon, ok func(registry.Policy) bool) {
	t.Helper()
	store := registry.NewStore(etcdClient(t, d.etcdURL), "")
	testpoll.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		p, err := store.GetPolicy(ctx)
		if err != nil {
			return err
		}
		if !ok(p) {
			return fmt.Errorf("policy %+v is not the one the daemon was started with yet", p)
		}
		return nil
	})
}
