package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// addContainer gives the fake Docker a container.
func addContainer(t *testing.T, e *testEnv, name string, labels map[string]string, state, health string, created time.Time) {
	t.Helper()
	if _, err := e.docker.Add(api.Task{Name: name, Labels: labels, Image: "demo-task:latest", State: state, Health: health, Created: created}); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeShowsSpecStatusConditionsAndContainers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := withStatus(t, e)
	owned := func(slot string) map[string]string {
		return map[string]string{"name": "web", api.LabelController: "web", api.LabelSlot: slot}
	}
	addContainer(t, e, "web-2", owned("2"), api.StateExited, "", e.now.Add(-10*time.Minute))
	addContainer(t, e, "web-10", owned("10"), api.StateRunning, "", e.now.Add(-time.Minute))
	addContainer(t, e, "web-1", owned("1"), api.StateRunning, api.HealthHealthy, e.now.Add(-3*time.Hour))
	addContainer(t, e, "api-1", map[string]string{api.LabelController: "api", api.LabelSlot: "1"}, api.StateRunning, "", e.now)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout,
		"ID:                 web\n",
		"Labels:             name=web\n",
		"Selector:           name=web\n",
		"Replicas:           3 desired\n",
		"Image:              demo-task:latest\n",
		"Command:            /task --listen :8080\n",
		"Ports:              8080/TCP (http)\n",
		"Environment:\n  MODE:             <hidden>\n  API_TOKEN:        <hidden>\n",
		"Memory:             67108864 bytes (64MiB)\n",
		"CPU shares:         512\n",
		"Status:             3 current / 2 ready / 1 available\n",
		"Observed:           etcd revision "+itoa(rev)+" (up to date)\n",
		"Last sync:          2026-11-29T09:59:55Z (5s ago)\n",
		"ReplicaFailure   True     CreateFailed   create web-3: no such image: demo-task:latest   2m\n",
		"  NAME     NODE     SLOT   STATE     HEALTH    CREATED   IMAGE-ID\n"+
			"  web-1    <none>   1      running   healthy   3h ago    "+demoImageID+"\n"+
			"  web-2    <none>   2      exited    <none>    10m ago   "+demoImageID+"\n"+
			"  web-10   <none>   10     running   <none>    60s ago   "+demoImageID+"\n",
	)
	if strings.Contains(r.stdout, "api-1") {
		t.Errorf("describe web lists another controller's container:\n%s", r.stdout)
	}
}

func TestDescribeNeverPrintsEnvValues(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	if strings.Contains(r.stdout+r.stderr, secretValue) {
		t.Errorf("describe printed the env value %q:\n%s", secretValue, r.stdout)
	}
	for line := range strings.Lines(r.stdout) {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (name == "MODE" || name == "API_TOKEN") {
			if got := strings.TrimSpace(value); got != "<hidden>" {
				t.Errorf("env %s printed as %q, want <hidden>", name, got)
			}
		}
	}
}

func TestDescribeShowsInitContainersWithoutTheirEnvValues(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := newController("web", 1)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.InitContainers = []api.Container{{
		Name: "migrate", Image: "demo-task:latest", Command: api.Command{"/task", "write", "/ready"},
		Env: []api.EnvVar{{Name: "DB_PASSWORD", Value: "init-" + secretValue}},
	}}
	e.create(rc)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	for _, want := range []string{"Init container 1:", "migrate", "/task write /ready", "DB_PASSWORD:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe does not show %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "init-"+secretValue) {
		t.Errorf("describe printed the init container's env value:\n%s", r.stdout)
	}
}

func TestDescribeWithoutStatusOrContainersSaysSo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout,
		"Status:             <none> (the manager has not reported on this controller yet)\n",
		"Conditions:         <none>\n",
		"Containers:         <none>\n",
	)
}

func TestDescribeWithDockerUnavailablePrintsEtcdPartsAndFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	e.docker.ListErr = func() error { return errors.New("Cannot connect to the Docker daemon at unix:///var/run/docker.sock") }

	r := e.runCLI("describe", "web")

	assertFails(t, r, `containers of controller "web" unavailable: list containers: Cannot connect to the Docker daemon`)
	assertContains(t, r.stdout,
		"ID:                 web\n",
		"Status:             3 current / 2 ready / 1 available\n",
		"ReplicaFailure",
		"Containers:         <unavailable: list containers: Cannot connect to the Docker daemon at unix:///var/run/docker.sock>\n",
	)
}

func TestDescribeShowsUndecodableSpec(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.putRaw("broken", `{"id": "broken", "desiredState": {"replicas": "three"}}`)

	r := e.runCLI("describe", "broken")

	assertOK(t, r)
	assertContains(t, r.stdout, "ID:                 broken\n", "Spec:               <invalid: decode controller: desiredState.replicas")
}

func TestDescribeShowsStatusBehindSpec(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := withStatus(t, e)
	r := e.run("", "scale", "web", "--replicas", "4")
	assertOK(t, r)
	now := e.get("web").ModRevision

	r = e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, "Observed:           etcd revision "+itoa(rev)+" (the spec is at etcd revision "+itoa(now)+"; the manager has not acted on it yet)\n")
}

func TestDescribeUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.runCLI("describe", "nope")

	assertFails(t, r, `controller "nope" not found`)
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDescribeShowsHealthCheckAndHostAccess(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rc := newController("web", 1)
	ctr := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	ctr.HealthCheck = &api.HealthCheck{Test: api.Command{"/task", "-probe"}, Interval: api.Duration(5 * time.Second), Retries: 3}
	ctr.Privileged = true
	ctr.Volumes = []api.Volume{{HostPath: "/srv/data", ContainerPath: "/data", ReadOnly: true}}
	e.create(rc)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout,
		"Health check:       CMD /task -probe (interval 5s, retries 3)\n",
		"Privileged:         true\n",
		"Host mounts:        /srv/data -> /data (ro)\n",
	)
	if strings.Contains(r.stdout, "Host network:") {
		t.Errorf("describe shows a host access that is not set:\n%s", r.stdout)
	}
}

func TestDescribeShowsTheManagersEvents(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	cn := e.conn()
	lease, err := cn.store.GrantLease(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range []api.Event{
		{Controller: "web", Type: api.EventNormal, Reason: "Created", Message: "created 2 container(s): web-1, web-2", Time: e.now.Add(-2 * time.Minute)},
		{Controller: "web", Type: api.EventWarning, Reason: "FailedCreate", Message: "create web-3: no such image: demo-task:latest", Time: e.now.Add(-time.Minute)},
	} {
		if err := cn.store.PutEvents(t.Context(), []registry.NamedEvent{{Name: strconv.Itoa(i), Event: &ev}}, lease); err != nil {
			t.Fatal(err)
		}
	}

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, "Events:\n",
		"Normal    Created        created 2 container(s): web-1, web-2",
		"Warning   FailedCreate   create web-3: no such image: demo-task:latest")
	if strings.Index(r.stdout, "Created ") > strings.Index(r.stdout, "FailedCreate") {
		t.Errorf("events not oldest first:\n%s", r.stdout)
	}
}

func TestDescribeLeavesOutAnotherRegistrysContainers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	id, err := e.store.RegistryID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	labelled := func(reg string) map[string]string {
		return map[string]string{"name": "web", api.LabelController: "web", api.LabelSlot: "1", api.LabelRegistry: reg}
	}
	addContainer(t, e, "web-1", labelled(id), api.StateRunning, "", e.now)
	addContainer(t, e, "web-2", labelled("another-registry"), api.StateRunning, "", e.now)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, "  web-1 ")
	if strings.Contains(r.stdout, "web-2") {
		t.Errorf("describe lists another registry's container:\n%s", r.stdout)
	}
}

func TestDescribeShowsTheUpdateStrategy(t *testing.T) {
	t.Parallel()
	deadline := 120
	for _, tt := range []struct {
		name   string
		modify func(ds *api.ReplicationControllerState)
		want   []string
	}{
		{"the defaults", func(*api.ReplicationControllerState) {}, []string{"Strategy:           RollingUpdate (maxUnavailable 1, maxSurge 0)\n"}},
		{"a surge in percent, paused, a deadline and a restart", func(ds *api.ReplicationControllerState) {
			surge := intstr.FromString("25%")
			ds.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &surge, ProgressDeadlineSeconds: &deadline}
			ds.Paused = true
			ds.TaskTemplate.RestartedAt = "2026-11-29T09:00:00Z"
		}, []string{
			"Strategy:           RollingUpdate (maxUnavailable 1, maxSurge 25%)\n",
			"Progress deadline:  120s\n",
			"Paused:             true\n",
			"Restarted at:       2026-11-29T09:00:00Z\n",
		}},
		{"OnDelete", func(ds *api.ReplicationControllerState) {
			ds.UpdateStrategy = &api.UpdateStrategy{Type: api.OnDelete}
		}, []string{"Strategy:           OnDelete\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			rc := newController("web", 3)
			tt.modify(&rc.DesiredState)
			e.create(rc)

			r := e.runCLI("describe", "web")

			assertOK(t, r)
			assertContains(t, r.stdout, tt.want...)
			if !rc.DesiredState.Paused && strings.Contains(r.stdout, "Paused:") {
				t.Errorf("describe shows Paused for a controller that is not:\n%s", r.stdout)
			}
		})
	}
}

func TestDescribeShowsTheRecentRevisions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 3), "demo-task:3"))
	record(t, e, 10, "demo-task:1", 4*time.Hour)
	record(t, e, 11, "demo-task:2", 3*time.Hour)
	record(t, e, 12, "demo-task:3", 2*time.Hour)
	record(t, e, 13, "demo-task:4", time.Hour)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, ""+
		"Recent revisions:\n"+
		"  REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"  2          2026-11-29T07:00:00Z   demo-task:2\n"+
		"  3          2026-11-29T08:00:00Z   demo-task:3   *\n"+
		"  4          2026-11-29T09:00:00Z   demo-task:4\n"+
		"Events:")
	assertContains(t, r.stdout, "Revision:           3 (the spec is at etcd revision "+itoa(e.get("web").ModRevision)+")\n")
}

func TestDescribeWithoutRevisionsSaysSo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, "Recent revisions:   <none>\n",
		"Revision:           <none> (the spec is at etcd revision "+itoa(e.get("web").ModRevision)+"; the manager records its template when it first acts on it)\n")
}

// addTask gives the fake Docker a container of web's slot and returns its
// id.
func addTask(t *testing.T, e *testEnv, slot int, state string, created time.Time) string {
	t.Helper()
	id, err := e.docker.Add(api.Task{Name: "web-" + strconv.Itoa(slot), Image: "demo-task:latest", State: state, Created: created,
		Labels: map[string]string{"name": "web", api.LabelController: "web", api.LabelSlot: strconv.Itoa(slot)}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestDescribeShowsTheNodeOfEachContainer(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	local := e.grantLease(time.Hour)
	web1 := addTask(t, e, 1, api.StateRunning, e.now.Add(-time.Hour))
	addTask(t, e, 2, api.StateExited, e.now.Add(-2*time.Hour)) // no report lists it: kept for inspection
	e.report(local, "node-a", "web", api.ReportedTask{Name: "web-1", ID: web1, Slot: 1, State: api.StateRunning, Created: e.now.Add(-time.Hour)})
	// another engine's container, which the local Docker does not see
	other := reported("web", 3, e.now.Add(-10*time.Minute))
	other.Health = api.HealthHealthy
	e.report(e.grantLease(time.Hour), "node-b", "web", other)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, ""+
		"Containers:\n"+
		"  NAME    NODE     SLOT   STATE     HEALTH    CREATED    IMAGE-ID\n"+
		"  web-1   node-a   1      running   <none>    60m ago    "+demoImageID+"\n"+
		"  web-2   <none>   2      exited    <none>    120m ago   "+demoImageID+"\n"+
		"  web-3   node-b   3      running   healthy   10m ago    "+demoImageID+"\n"+
		"Images:             <none>\n"+
		"Recent revisions:")
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing", r.stderr)
	}
}

func TestDescribeWithDockerUnavailableShowsTheNodesReportsAndSucceeds(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	e.docker.ListErr = func() error { return errors.New("Cannot connect to the Docker daemon at unix:///var/run/docker.sock") }
	e.report(e.grantLease(time.Hour), "node-b", "web", reported("web", 2, e.now.Add(-time.Minute)), reported("web", 1, e.now.Add(-time.Hour)))
	e.report(e.grantLease(time.Hour), "node-a", "web", reported("web", 3, e.now.Add(-3*time.Hour)))

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout,
		"Status:             3 current / 2 ready / 1 available\n",
		"Containers:\n"+
			"  NAME    NODE     SLOT   STATE     HEALTH   CREATED   IMAGE-ID\n"+
			"  web-1   node-b   1      running   <none>   60m ago   "+demoImageID+"\n"+
			"  web-2   node-b   2      running   <none>   60s ago   "+demoImageID+"\n"+
			"  web-3   node-a   3      running   <none>   3h ago    "+demoImageID+"\n")
	assertContains(t, r.stderr, "warning: the local Docker cannot be asked", "Cannot connect to the Docker daemon")
}
