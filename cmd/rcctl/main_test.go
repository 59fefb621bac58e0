package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// testEnv is an embedded etcd with a Store on it, a fake Docker and a fixed
// clock for the commands that print ages.
type testEnv struct {
	t      *testing.T
	etcd   *etcdtest.Server
	client *clientv3.Client
	store  *registry.Store
	docker *taskcontrol.Fake
	now    time.Time
}

func newTestEnv(t *testing.T, opts ...func(*embed.Config)) *testEnv {
	t.Helper()
	srv := startEtcd(t, opts...)
	client := srv.Client(t)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	return &testEnv{
		t:      t,
		etcd:   srv,
		client: client,
		store:  registry.NewStore(client, registry.DefaultPrefix),
		docker: &taskcontrol.Fake{Now: func() time.Time { return now }},
		now:    now,
	}
}

// startEtcd starts an embedded etcd for the test. etcdtest picks ports
// that were free a moment before etcd binds them, so with many servers
// starting in parallel a port is sometimes taken: that start is retried.
func startEtcd(t *testing.T, opts ...func(*embed.Config)) *etcdtest.Server {
	t.Helper()
	opts = append([]func(*embed.Config){fastElection}, opts...)
	for attempt := 1; ; attempt++ {
		srv, err := etcdtest.New(t.TempDir(), opts...)
		if err == nil {
			t.Cleanup(srv.Close)
			return srv
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("start embedded etcd: %v", err)
		}
	}
}

// fastElection lets the single-member test cluster elect itself leader in
// tens of milliseconds instead of a second.
func fastElection(cfg *embed.Config) {
	cfg.TickMs = 10
	cfg.ElectionMs = 100
}

// result is what one rcctl invocation printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

// run calls run() as main does, against the test etcd.
func (e *testEnv) run(stdin string, args ...string) result {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), e.args(args), strings.NewReader(stdin), &stdout, &stderr)
	return result{stdout.String(), stderr.String(), err}
}

// runCLI is run with the fake Docker and the fixed clock.
func (e *testEnv) runCLI(args ...string) result {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	c := e.cli(&stdout, &stderr)
	err := c.run(context.Background(), e.args(args))
	return result{stdout.String(), stderr.String(), err}
}

func (e *testEnv) args(args []string) []string {
	return append([]string{"--etcd-servers", e.etcd.ClientURL}, args...)
}

func (e *testEnv) cli(stdout, stderr io.Writer) *cli {
	c := newCLI(strings.NewReader(""), stdout, stderr)
	c.dialDocker = func(string) (taskLister, func(), error) { return e.docker, nil, nil }
	c.now = func() time.Time { return e.now }
	c.opts = globalOptions{
		etcdServers: []string{e.etcd.ClientURL},
		prefix:      registry.DefaultPrefix,
		dialTimeout: 5 * time.Second,
		maxReplicas: api.DefaultMaxReplicas,
	}
	return c
}

// conn opens an rcctl connection for tests that call the commands'
// functions directly.
func (e *testEnv) conn() *conn {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	cn, err := e.cli(&stdout, &stderr).connect(context.Background())
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(cn.close)
	return cn
}

// create stores a controller directly, as another client would.
func (e *testEnv) create(rc *api.ReplicationController) int64 {
	e.t.Helper()
	rev, err := e.store.CreateController(context.Background(), rc)
	if err != nil {
		e.t.Fatalf("create %s: %v", rc.ID, err)
	}
	return rev
}

// get reads a stored controller.
func (e *testEnv) get(id string) registry.Spec {
	e.t.Helper()
	spec, err := e.store.GetController(context.Background(), id)
	if err != nil {
		e.t.Fatalf("get %s: %v", id, err)
	}
	if spec.Err != nil {
		e.t.Fatalf("get %s: stored spec does not decode: %v", id, spec.Err)
	}
	return spec
}

// putRaw writes a value under a controller key, bypassing every check.
func (e *testEnv) putRaw(id, value string) {
	e.t.Helper()
	if _, err := e.client.Put(context.Background(), e.store.ControllerKey(id), value); err != nil {
		e.t.Fatalf("put %s: %v", id, err)
	}
}

// revision is etcd's current revision: it moves on every write.
func (e *testEnv) revision() int64 {
	e.t.Helper()
	resp, err := e.client.Get(context.Background(), "revision-probe")
	if err != nil {
		e.t.Fatalf("read revision: %v", err)
	}
	return resp.Header.Revision
}

func (e *testEnv) putStatus(st *api.ReplicationControllerStatus) {
	e.t.Helper()
	if err := e.store.PutStatus(context.Background(), st); err != nil {
		e.t.Fatalf("put status %s: %v", st.ID, err)
	}
}

// writeFile writes content to a file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newController is the controller of docs/CONTRACT.md, Spec, with another id
// and replica count. Its env holds a secret that must never be printed
// outside -o json|yaml.
func newController(id string, replicas int) *api.ReplicationController {
	labels := map[string]string{"name": id}
	return &api.ReplicationController{
		ID:     id,
		Labels: maps.Clone(labels),
		DesiredState: api.ReplicationControllerState{
			Replicas:      replicas,
			ReplicasInSet: maps.Clone(labels),
			TaskTemplate: api.TaskTemplate{
				Labels: maps.Clone(labels),
				DesiredState: api.TaskState{Manifest: api.ContainerManifest{
					Version: "v1beta1",
					Containers: []api.Container{{
						Name:    id,
						Image:   "demo-task:latest",
						Command: api.Command{"/task", "--listen", ":8080"},
						Ports:   []api.Port{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}},
						Env: []api.EnvVar{
							{Name: "MODE", Value: "demo"},
							{Name: "API_TOKEN", Value: secretValue},
						},
						Memory: 64 << 20,
						CPU:    512,
					}},
				}},
			},
		},
	}
}

const secretValue = "s3cret-token-value"

func encode(t *testing.T, rc *api.ReplicationController) string {
	t.Helper()
	data, err := api.Encode(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// assertOK fails the test when an invocation failed.
func assertOK(t *testing.T, r result) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("rcctl failed: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
	}
}

// assertFails fails the test unless an invocation failed with an error
// containing every want.
func assertFails(t *testing.T, r result, wants ...string) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("rcctl succeeded, want an error containing %q\nstdout:\n%s", wants, r.stdout)
	}
	for _, want := range wants {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not contain %q", r.err, want)
		}
	}
}

func assertStdout(t *testing.T, r result, want string) {
	t.Helper()
	assertOK(t, r)
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
}

func assertContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("output does not contain %q:\n%s", want, got)
		}
	}
}

func assertNotFound(t *testing.T, e *testEnv, id string) {
	t.Helper()
	_, err := e.store.GetController(t.Context(), id)
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("controller %q: got err %v, want not found", id, err)
	}
}

func TestHelpPrintsUsageAndSucceeds(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"help", "scale"}, {"scale", "-h"}, {"apply", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
			if err != nil {
				t.Fatalf("run %q: %v", args, err)
			}
			assertContains(t, stdout.String(), "Usage:", "--etcd-servers")
		})
	}
}

func TestUsageMistakesExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"get", "--bogus"},
		{"get", "-o", "xml"},
		{"get", "a", "b"},
		{"apply"},
		{"scale", "web"},
		{"describe"},
		{"delete"},
		{"run", "web"},
		{"--etcd-servers", "ftp://x:1", "get"},
		{"--etcd-user", "root", "get"},
		{"--etcd-servers", "http://127.0.0.1:1", "--etcd-user", "root", "--etcd-password", "pw", "get"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
			if err == nil {
				t.Fatalf("run %q succeeded, want a usage error", args)
			}
			if got := exitCode(err); got != 2 {
				t.Errorf("exit code %d, want 2 (error %v)", got, err)
			}
		})
	}
}

func TestErrorsPrintAsOneLine(t *testing.T) {
	t.Parallel()
	err := errors.New("apply web.json: invalid:\n  desiredState.replicas: must be between 0 and 1000, got -1\n\n  id: required\n")
	got := oneLine(err)
	want := "apply web.json: invalid:; desiredState.replicas: must be between 0 and 1000, got -1; id: required"
	if got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
	if exitCode(err) != 1 {
		t.Errorf("exit code %d, want 1", exitCode(err))
	}
}

// runOffline calls run() with no etcd behind it: for what must fail or
// finish before connecting.
func runOffline(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), append([]string{"--etcd-servers", etcdtest.FreeAddr(t), "--etcd-dial-timeout", "1s"}, args...), strings.NewReader(""), &stdout, &stderr)
	return result{stdout.String(), stderr.String(), err}
}

// assertNoSecret fails when the secret env value shows anywhere.
func assertNoSecret(t *testing.T, r result) {
	t.Helper()
	assertNoSecretIn(t, r, secretValue)
}

// assertNoSecretIn fails when secret shows in the output or the error.
func assertNoSecretIn(t *testing.T, r result, secret string) {
	t.Helper()
	all := r.stdout + r.stderr
	if r.err != nil {
		all += r.err.Error()
	}
	if strings.Contains(all, secret) {
		t.Errorf("the secret %q was printed: %q", secret, all)
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	c := newCLI(strings.NewReader(""), &stdout, &stderr)

	err := c.run(t.Context(), []string{"help"})

	assertOK(t, result{stdout.String(), stderr.String(), err})
	var names []string
	for _, cmd := range c.commands() {
		names = append(names, cmd.Name())
	}
	for _, name := range append(names, "completion", "help") {
		if !strings.Contains(stdout.String(), "\n  "+name+" ") {
			t.Errorf("rcctl help does not list %q:\n%s", name, stdout.String())
		}
	}
}

func TestHelpOfACommandShowsItsFlagsThenTheGlobalOnes(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help", "scale"}, {"scale", "--help"}, {"scale", "web", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
			assertOK(t, result{stdout.String(), stderr.String(), err})
			out := stdout.String()
			assertContains(t, out, "Usage:\n  rcctl scale ID --replicas N [flags]\n", "Flags:\n", "--replicas int", "--timeout duration", "Global Flags:\n")
			if strings.Index(out, "--replicas int") > strings.Index(out, "--etcd-servers") {
				t.Errorf("the global flags come before scale's own:\n%s", out)
			}
		})
	}
}

func TestHelpOfAnUnknownCommandIsAUsageError(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer

	err := run(t.Context(), []string{"help", "frobnicate"}, strings.NewReader(""), &stdout, &stderr)

	assertFails(t, result{stdout.String(), stderr.String(), err}, `unknown command "frobnicate" (see rcctl help)`)
	if got := exitCode(err); got != 2 {
		t.Errorf("exit code %d, want 2", got)
	}
}

func TestUsageErrorsNameTheCommandAndItsHelp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "--bogus"}, "get: unknown flag: --bogus (see rcctl get -h)"},
		{[]string{"--bogus", "get"}, "unknown flag: --bogus (see rcctl help)"},
		{[]string{"frobnicate", "--bogus"}, `unknown command "frobnicate" (see rcctl help)`},
		{[]string{"scale", "web", "--replicas", "many"}, `scale: invalid argument "many" for "--replicas" flag`},
		{[]string{"completion", "bash", "--bogus"}, "completion bash: unknown flag: --bogus (see rcctl completion bash -h)"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, strings.NewReader(""), &stdout, &stderr)
			assertFails(t, result{stdout.String(), stderr.String(), err}, tt.want)
			if got := exitCode(err); got != 2 {
				t.Errorf("exit code %d, want 2", got)
			}
			if stdout.Len()+stderr.Len() != 0 {
				t.Errorf("printed %q and %q, want nothing (main prints the error)", stdout.String(), stderr.String())
			}
		})
	}
}
