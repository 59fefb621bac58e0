package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// binDir holds the programs built once for the whole package.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := buildPrograms(dir)
	if code == 0 {
		code = dockertest.Main(m)
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildPrograms builds the daemon, rcctl, and the real etcd server from
// the module, for the tests of several nodes. The daemon is built as
// make build builds it, without the race detector: dozens of raced daemons
// on two cores made the suite CPU-bound, and nothing read their race
// reports; the packages' own tests run under -race.
func buildPrograms(dir string) int {
	root, err := dockertest.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, args := range [][]string{
		{"build", "-o", dir + "/", "./cmd/replication-manager", "./cmd/rcctl"},
		{"build", "-o", filepath.Join(dir, "etcd"), "go.etcd.io/etcd/server/v3"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		// as make build: the walkthrough's make run then finds every
		// package compiled (with cgo on, it compiled the daemon's whole
		// tree again, minutes on two cores)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: go %s: %v\n%s", strings.Join(args, " "), err, out)
			return 1
		}
	}
	return 0
}

// daemon is a running replication-manager with its embedded etcd.
type daemon struct {
	cmd         *exec.Cmd
	etcdURL     string
	peerURL     string
	metricsAddr string
	dataDir     string
	logs        *syncbuf.Buffer
	done        chan error
}

// startDaemon runs the daemon until the test ends; extra flags are added.
// Call it after dockertest.Labels, so that the daemon is stopped before the
// test's containers are removed.
func startDaemon(t *testing.T, extra ...string) *daemon {
	t.Helper()
	var d *daemon
	for try := 1; ; try++ {
		d = &daemon{
			etcdURL:     "http://" + etcdtest.FreeAddr(t),
			peerURL:     "http://" + etcdtest.FreeAddr(t),
			metricsAddr: etcdtest.FreeAddr(t),
			dataDir:     filepath.Join(t.TempDir(), "etcd"),
			logs:        &syncbuf.Buffer{},
		}
		err := d.tryExec(t, d.startArgs(extra))
		if err == nil {
			break
		}
		// a port drawn free a moment ago may have been bound since by
		// another process: draw again, with a data dir of its own
		if !strings.Contains(err.Error(), "address already in use") || try == startTries {
			t.Fatal(err)
		}
		t.Logf("the daemon found a port taken; drawing again: %v", err)
	}
	t.Cleanup(func() {
		d.stop(t)
		if t.Failed() {
			t.Logf("daemon logs:\n%s", d.logs.String())
		}
	})
	return d
}

// startTries is how many times startDaemon draws ports for a daemon that
// found one taken.
const startTries = 3

func (d *daemon) start(t *testing.T, extra ...string) {
	t.Helper()
	d.exec(t, d.startArgs(extra))
}

// startArgs are the flags of a daemon with its embedded etcd, and extra.
func (d *daemon) startArgs(extra []string) []string {
	return append([]string{
		"--etcd-data-dir", d.dataDir,
		"--etcd-listen-client-urls", d.etcdURL,
		"--etcd-listen-peer-urls", d.peerURL,
	}, extra...)
}

// startShared runs a daemon on the etcd of another, until the test ends.
func (d *daemon) startShared(t *testing.T, extra ...string) {
	t.Helper()
	d.exec(t, append([]string{"--etcd-servers", d.etcdURL}, extra...))
	t.Cleanup(func() {
		d.stop(t)
		if t.Failed() {
			t.Logf("second daemon logs:\n%s", d.logs.String())
		}
	})
}

func (d *daemon) exec(t *testing.T, args []string) {
	t.Helper()
	if err := d.tryExec(t, args); err != nil {
		t.Fatal(err)
	}
}

// tryExec starts the daemon with args and waits until it is ready; an
// error, with its logs, when it exited first or was not ready in time
// (it is killed then).
func (d *daemon) tryExec(t *testing.T, args []string) error {
	t.Helper()
	args = append(args, "--metrics-bind-address", d.metricsAddr, "--log-level", "debug")
	d.cmd = exec.Command(filepath.Join(binDir, "replication-manager"), args...)
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("start daemon: %w", err)
	}
	d.done = make(chan error, 1)
	go func() { d.done <- d.cmd.Wait() }()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := testpoll.Wait(ctx, 60*time.Second, func() error {
		select {
		case err := <-d.done:
			d.done <- err
			cancel() // no use waiting
			return fmt.Errorf("daemon exited: %w\n%s", err, d.logs.String())
		default:
		}
		resp, err := http.Get("http://" + d.metricsAddr + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	})
	if err != nil { // not ready: a daemon still running goes too
		_ = d.cmd.Process.Kill()
		t.Logf("the daemon that did not start has ended: %v", <-d.done)
		d.cmd = nil
	}
	return err
}

// kill sends SIGKILL, as a crash would, and waits for the process to go.
func (d *daemon) kill(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-d.done; err == nil {
		t.Fatal("the daemon exited cleanly after SIGKILL")
	}
	d.cmd = nil
}

// stop sends SIGTERM and waits for a clean exit.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("daemon exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("daemon did not stop within 30s of SIGTERM; killed: %v", <-d.done)
	}
	d.cmd = nil
}

// rcctl runs the CLI against the daemon's etcd and returns its stdout; a
// non-zero exit fails the test.
func (d *daemon) rcctl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := d.tryRcctl(stdin, args...)
	if err != nil {
		t.Fatalf("rcctl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (d *daemon) tryRcctl(stdin string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "rcctl"), append([]string{"--etcd-servers", d.etcdURL}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// status reads the controller's status from the daemon's etcd; nil when
// there is none yet.
func (d *daemon) status(t *testing.T, id string) *api.ReplicationControllerStatus {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{d.etcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	st, err := registry.NewStore(client, "").GetStatus(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("status of %s: %v", id, err)
	}
	return st
}

// controllerJSON is a controller of the demo image whose containers carry
// the test's labels, so that they are found and removed after the test.
func controllerJSON(t *testing.T, id, image string, replicas int, testLabels map[string]string) string {
	t.Helper()
	return mustJSON(t, controller(id, image, replicas, testLabels))
}

func mustJSON(t *testing.T, rc *api.ReplicationController) string {
	t.Helper()
	b, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// controller is the spec controllerJSON encodes, for tests to adjust: the
// demo controller, with a port and an environment variable.
func controller(id, image string, replicas int, testLabels map[string]string) *api.ReplicationController {
	rc := demospec.Controller(id, image, replicas, testLabels)
	c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	c.Ports = []api.Port{{ContainerPort: 8080}}
	c.Env = []api.EnvVar{{Name: "MODE", Value: "e2e"}}
	// the image's health check is off: each container is ready as soon
	// as it runs. Its probe every 2 s, in every container of every
	// parallel test, loaded the engine the tests share, and a probe that
	// timed out on it made a replica not ready and a scale-down take
	// another slot than the test expected; and each container waited 2
	// s for its first probe. The tests of health checks set their own,
	// or withImageHealthCheck.
	c.HealthCheck = &api.HealthCheck{Test: api.Command{"NONE"}}
	return rc
}

// withImageHealthCheck gives rc's first container the image's health
// check back (HEALTHCHECK: /task healthcheck every 2 s).
func withImageHealthCheck(rc *api.ReplicationController) *api.ReplicationController {
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = nil
	return rc
}

// dockerClient is the Docker client the tests use.
type dockerClient = *client.Client

// containers returns the names and states of the controller's containers.
func containers(t *testing.T, cli *client.Client, id string) map[string]container.Summary {
	t.Helper()
	list, err := cli.ContainerList(t.Context(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id)),
	})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	out := make(map[string]container.Summary, len(list))
	for _, c := range list {
		if name := taskcontrol.SummaryName(c.Names); name != "" { // none: being removed
			out[name] = c
		}
	}
	return out
}

// waitForReplicas waits until the controller has exactly the running
// containers <id>-1 .. <id>-n and nothing else.
func waitForReplicas(t *testing.T, cli *client.Client, id string, n int) map[string]container.Summary {
	t.Helper()
	return waitForSlots(t, cli, id, n, false)
}

// waitForHealthy is waitForReplicas that also waits for every container's
// health check to pass. A scale-down takes the replicas that are not ready
// first, so a test that expects it to keep slots 1..n waits for this.
func waitForHealthy(t *testing.T, cli *client.Client, id string, n int) map[string]container.Summary {
	t.Helper()
	return waitForSlots(t, cli, id, n, true)
}

func waitForSlots(t *testing.T, cli *client.Client, id string, n int, healthy bool) map[string]container.Summary {
	t.Helper()
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("%s-%d", id, i+1)
	}
	sort.Strings(want)
	var got map[string]container.Summary
	testpoll.Eventually(t, 90*time.Second, func() error {
		got = containers(t, cli, id)
		var names []string
		for name, c := range got {
			if c.State != "running" {
				return fmt.Errorf("%s is %s", name, c.State)
			}
			if healthy && !strings.Contains(c.Status, "(healthy)") {
				return fmt.Errorf("%s is %q, not healthy yet", name, c.Status)
			}
			names = append(names, name)
		}
		sort.Strings(names)
		if strings.Join(names, ",") != strings.Join(want, ",") {
			return fmt.Errorf("containers %v, want %v", names, want)
		}
		return nil
	})
	return got
}

// program is a process a test started in a process group of its own, with
// its output in logs.
type program struct {
	name string
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
	done chan error
}

// startProgram starts name with args in dir, with env added to the test's
// environment, in a process group of its own, so that a signal reaches
// what it starts too (make run's daemon). When the test ends it is stopped
// as stop does, and its output is logged if the test failed.
func startProgram(t *testing.T, dir string, env []string, name string, args ...string) *program {
	t.Helper()
	p := &program{name: name, logs: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.stop(t, 30*time.Second)
		if t.Failed() {
			t.Logf("%s %s output:\n%s", name, strings.Join(args, " "), p.logs.String())
		}
	})
	return p
}

// exited returns the program's exit error when it has exited, and nil while
// it runs.
func (p *program) exited() error {
	select {
	case err := <-p.done:
		p.done <- err
		if err == nil {
			return fmt.Errorf("%s exited", p.name)
		}
		return fmt.Errorf("%s exited: %w", p.name, err)
	default:
		return nil
	}
}

// stop sends SIGTERM to the program's process group and waits for it to
// exit, then SIGKILLs the group after grace. Stopping a stopped program
// does nothing. A non-zero exit is no failure: make reports the signal
// that stopped it.
func (p *program) stop(t *testing.T, grace time.Duration) {
	t.Helper()
	if p.cmd == nil {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-p.done:
		t.Logf("%s stopped: %v", p.name, err)
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		err := <-p.done
		t.Errorf("%s did not stop within %s of SIGTERM; killed (%v)", p.name, grace, err)
	}
	p.cmd = nil
	// The group outlives its leader while a child still runs.
	testpoll.Eventually(t, grace, func() error {
		if syscall.Kill(-pgid, 0) == nil {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return fmt.Errorf("a process of %s's group outlived it", p.name)
		}
		return nil
	})
}
