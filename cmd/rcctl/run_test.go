package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestRunCreatesControllerInThe2014Shape(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "run", "web", "--image", "demo-task:latest", "--replicas", "1",
		"--port", "127.0.0.1:8080:80", "--port", "53/udp", "--env", "MODE=demo", "--env", "TOKEN=a=b", "--command", "/task --listen :80")

	assertStdout(t, r, "controller \"web\" created\n")
	labels := map[string]string{"name": "web"}
	want := &api.ReplicationController{
		ID:     "web",
		Labels: labels,
		DesiredState: api.ReplicationControllerState{
			Replicas:      1,
			ReplicasInSet: labels,
			TaskTemplate: api.TaskTemplate{
				Labels: labels,
				DesiredState: api.TaskState{Manifest: api.ContainerManifest{
					Version: "v1beta1",
					Containers: []api.Container{{
						Name:    "web",
						Image:   "demo-task:latest",
						Command: api.Command{"/task", "--listen", ":80"},
						Ports: []api.Port{
							{HostIP: "127.0.0.1", HostPort: 8080, ContainerPort: 80, Protocol: "TCP"},
							{ContainerPort: 53, Protocol: "UDP"},
						},
						Env: []api.EnvVar{{Name: "MODE", Value: "demo"}, {Name: "TOKEN", Value: "a=b"}},
					}},
				}},
			},
		},
	}
	if got := encode(t, e.get("web").Controller); got != encode(t, want) {
		t.Errorf("stored spec:\n%s\nwant:\n%s", got, encode(t, want))
	}
}

// storedCommand is the command of the only container of controller id.
func (e *testEnv) storedCommand(id string) api.Command {
	e.t.Helper()
	return e.get(id).Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command
}

func TestRunStoresTheCommandAfterDashDashExactlyAsGiven(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	// flags after -- belong to the command, not to rcctl
	r := e.run("", "run", "q", "--image", "busybox", "--", "sh", "-c", "echo hi; sleep 1000", "--replicas", "3")

	assertStdout(t, r, "controller \"q\" created\n")
	want := api.Command{"sh", "-c", "echo hi; sleep 1000", "--replicas", "3"}
	if got := e.storedCommand("q"); !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
	if got := e.get("q").Controller.DesiredState.Replicas; got != 1 {
		t.Errorf("replicas %d, want the default 1: --replicas after -- is the command's", got)
	}
}

func TestRunSplitsCommandFlagWithShellQuoting(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "run", "q", "--image", "busybox", "--command", `sh -c 'echo hi; sleep 1000' "a b"`)

	assertOK(t, r)
	want := api.Command{"sh", "-c", "echo hi; sleep 1000", "a b"}
	if got := e.storedCommand("q"); !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
}

func TestRunWithoutCommandKeepsTheImagesCommand(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	assertOK(t, e.run("", "run", "q", "--image", "busybox", "--command", "  "))

	if got := e.storedCommand("q"); got != nil {
		t.Errorf("command %q, want none (the image's)", got)
	}
}

func TestRunSetsTheImagePullPolicyAndRefusesAnUnknownOne(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	assertOK(t, e.run("", "run", "q", "--image", "reg:5000/app:1", "--image-pull-policy", "Always"))
	if got := e.get("q").Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy; got != api.PullAlways {
		t.Errorf("imagePullPolicy %q, want Always", got)
	}
	r := e.run("", "run", "q2", "--image", "app:1", "--image-pull-policy", "sometimes")
	if r.err == nil || !strings.Contains(r.err.Error(), "containers[0].imagePullPolicy: must be IfNotPresent, Always or Never") {
		t.Errorf("an unknown policy: err %v, stderr %q; want the field path's error", r.err, r.stderr)
	}
}

func TestRunRefusesCommandMistakesAsUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"q", "--image", "busybox", "--command", "sh", "--", "sh", "-c", "true"}, "either with --command or after --, not both"},
		{[]string{"q", "--image", "busybox", "--"}, "nothing after --"},
		{[]string{"--image", "busybox", "--", "sh"}, "want exactly one ID, got 0"},
		{[]string{"q", "r", "--image", "busybox", "--", "sh"}, "want exactly one ID, got 2"},
		{[]string{"q", "--image", "busybox", "--command", `sh -c 'echo hi`}, `--command "sh -c 'echo hi"`},
	} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			r := runOffline(t, append([]string{"run"}, tt.args...)...)
			assertFails(t, r, tt.want)
			if exitCode(r.err) != 2 {
				t.Errorf("exit code %d, want 2", exitCode(r.err))
			}
		})
	}
}

func TestRunThenGetListsTheController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	assertOK(t, e.run("", "run", "web", "--image", "demo-task:latest", "--replicas", "3"))

	r := e.run("", "get")

	assertStdout(t, r, ""+
		"ID    DESIRED   CURRENT   READY    UP-TO-DATE   STATUS    AGE         IMAGE\n"+
		"web   3         <none>    <none>   <none>       Pending   <unknown>   demo-task:latest\n")
}

func TestRunWithLabelsUsesThemAsSelectorAndTemplateLabels(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "run", "Web.App", "--image", "demo-task:latest", "--label", "app=web", "--label", "tier=front")

	assertStdout(t, r, "controller \"Web.App\" created\n")
	got := e.get("Web.App").Controller
	want := "app=web,tier=front"
	ds := got.DesiredState
	for name, labels := range map[string]map[string]string{"labels": got.Labels, "selector": ds.ReplicasInSet, "template labels": ds.TaskTemplate.Labels} {
		if formatLabels(labels) != want {
			t.Errorf("%s %v, want %s", name, labels, want)
		}
	}
	if ds.Replicas != 1 {
		t.Errorf("replicas %d, want the default 1", ds.Replicas)
	}
	if name := ds.TaskTemplate.DesiredState.Manifest.Containers[0].Name; name != "" {
		t.Errorf("container name %q, want none: %q is not a DNS label", name, "web.app")
	}
}

func TestRunRefusesExistingController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	before := e.revision()

	r := e.run("", "run", "web", "--image", "other:latest", "--replicas", "1")

	assertFails(t, r, `controller "web" already exists; use rcctl scale or rcctl apply`)
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestRunRefusesInvalidControllerAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "run", "web", "--image", "demo-task:latest", "--label", "com.docker.x=1")

	assertFails(t, r, `labels["com.docker.x"]`, "nothing written")
	assertNotFound(t, e, "web")
}

func TestRunRejectsMalformedFlagsWithoutEchoingEnvValues(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "http"}, `--port "http": "http" is not a port number`},
		{[]string{"--port", "1:2:3:4"}, "want CONTAINER, HOST:CONTAINER or IP:HOST:CONTAINER"},
		{[]string{"--port", "80/sctp"}, "protocol must be tcp or udp"},
		{[]string{"--label", "novalue"}, `--label "novalue": want KEY=VALUE`},
		{[]string{"--env", "=" + secretValue}, "--env: want NAME=VALUE"},
		{[]string{"--replicas", "2"}, "--image is required"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"run", "web"}, tt.args...)
			if tt.want != "--image is required" {
				args = append(args, "--image", "demo-task:latest")
			}
			r := runOffline(t, args...)
			assertFails(t, r, tt.want)
			if exitCode(r.err) != 2 {
				t.Errorf("exit code %d, want 2", exitCode(r.err))
			}
			assertNoSecret(t, r)
		})
	}
}

func TestContainerNameIsLowercasedIDWhenThatIsADNSLabel(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{"web": "web", "Web-1": "web-1", "web_app": "", "web.app": "", "-x": ""} {
		if got := containerName(id); got != want {
			t.Errorf("containerName(%q) = %q, want %q", id, got, want)
		}
	}
}
