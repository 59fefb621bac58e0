package e2e

// Several Docker hosts (docs/CONTRACT.md, Nodes), for real: this machine's
// engine is node a, a second dockerd (dockertest.StartEngine) is node b,
// an external etcd (the real server, built from the module) is the only
// coordinator, and each engine has a manager of its own. Node b's manager
// reaches etcd through a proxy, so that a test can cut it off.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/tcpproxy"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// Short leases and grace, so that the tests of a dead node take seconds.
const (
	multiLease = "4s"
	multiGrace = 4 * time.Second
)

// twoNodes is a registry of two nodes.
type twoNodes struct {
	etcdURL string
	proxy   *tcpproxy.Proxy // node b's way to etcd
	a, b    *daemon
	engineB *dockertest.Engine
	cliA    *client.Client
	cliB    *client.Client
	image   string
	labels  map[string]string
}

// startTwoNodes starts the external etcd, the second engine and a manager
// on each engine; extra flags go to both managers.
func startTwoNodes(t *testing.T, extra ...string) *twoNodes {
	t.Helper()
	n := &twoNodes{cliA: dockertest.Client(t), image: dockertest.DemoImage(t)}
	n.engineB = dockertest.StartEngine(t)
	n.engineB.LoadImage(t, n.image)
	n.cliB = n.engineB.Client(t)
	n.labels = dockertest.Labels(t) // after the engine: the managers stop before the containers go
	n.etcdURL = startEtcd(t)
	n.proxy = tcpproxy.New(t, strings.TrimPrefix(n.etcdURL, "http://"))

	common := append([]string{"--leader-elect-lease-duration", multiLease, "--node-grace", multiGrace.String()}, extra...)
	n.a = &daemon{etcdURL: n.etcdURL, metricsAddr: etcdtest.FreeAddr(t), logs: &syncbuf.Buffer{}}
	n.a.startShared(t, append([]string{"--node-name", "a", "--node-labels", "zone=a"}, common...)...)
	n.b = &daemon{etcdURL: "http://" + n.proxy.Addr(), metricsAddr: etcdtest.FreeAddr(t), logs: &syncbuf.Buffer{}}
	n.b.startShared(t, n.argsB(common)...)
	return n
}

func (n *twoNodes) argsB(common []string) []string {
	return append([]string{"--docker-host", n.engineB.Host, "--node-name", "b", "--node-labels", "zone=b"}, common...)
}

// startEtcd runs the real etcd server until the test ends and returns its
// client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	client, peer := "http://"+etcdtest.FreeAddr(t), "http://"+etcdtest.FreeAddr(t)
	cmd := exec.Command(filepath.Join(binDir, "etcd"), "--name", "e2e", "--data-dir", filepath.Join(t.TempDir(), "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "e2e="+peer)
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done //nolint:errcheck // etcd exits with a status on SIGINT
		if t.Failed() {
			t.Logf("etcd logs:\n%s", logs)
		}
	})
	testpoll.Eventually(t, 30*time.Second, func() error {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("etcd exited: %w\n%s", err, logs)
		default:
		}
		out, err := exec.Command(filepath.Join(binDir, "rcctl"), "--etcd-servers", client, "get").CombinedOutput()
		if err != nil {
			return fmt.Errorf("rcctl get: %w: %s", err, out)
		}
		return nil
	})
	return client
}

// runningOn counts the running containers of controller id on one engine.
func runningOn(t *testing.T, cli *client.Client, id string) int {
	t.Helper()
	slots, err := runningSlots(t.Context(), cli, id)
	if err != nil {
		t.Fatal(err)
	}
	return len(slots)
}

// runningSlots returns the slot of each running container of controller
// id on one engine.
func runningSlots(ctx context.Context, cli *client.Client, id string) ([]string, error) {
	list, err := cli.ContainerList(ctx, container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id), filters.Arg("status", "running")),
	})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	slots := make([]string, len(list))
	for i, c := range list {
		slots[i] = c.Labels[api.LabelSlot]
	}
	return slots, nil
}

// waitSpread waits until engine a runs onA and engine b runs onB of id's
// containers, and returns how long that took.
func (n *twoNodes) waitSpread(t *testing.T, id string, onA, onB int) time.Duration {
	t.Helper()
	return testpoll.Eventually(t, 90*time.Second, func() error {
		a, b := runningOn(t, n.cliA, id), runningOn(t, n.cliB, id)
		if a != onA || b != onB {
			return fmt.Errorf("running: %d on a, %d on b; want %d and %d", a, b, onA, onB)
		}
		return nil
	})
}

func TestTwoNodesSpreadSelectScaleAndDelete(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	web := newID("spread")
	n.a.rcctl(t, controllerJSON(t, web, n.image, 4, n.labels), "apply", "-f", "-")
	n.waitSpread(t, web, 2, 2)
	waitForStatus(t, n.a, web, func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 4 || st.ReadyReplicas != 4 {
			return fmt.Errorf("status %d replicas, %d ready; want 4 and 4 over both nodes", st.Replicas, st.ReadyReplicas)
		}
		return nil
	})
	if out := n.a.rcctl(t, "", "nodes"); !strings.Contains(out, "zone=a") || !strings.Contains(out, "zone=b") {
		t.Errorf("rcctl nodes does not list both nodes:\n%s", out)
	}
	// the leader, whichever it is, exports the nodes and the controllers
	metrics := httpGet(t, "http://"+n.a.metricsAddr+"/metrics") + httpGet(t, "http://"+n.b.metricsAddr+"/metrics")
	for _, series := range []string{`replication_manager_node_assigned_slots{node="a"} 2`, `replication_manager_node_up{node="b"} 1`,
		`replication_manager_controller_replicas_ready{controller="` + web + `"} 4`,
		`replication_manager_controller_replicas_desired{controller="` + web + `"} 4`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("no manager exports %s", series)
		}
	}

	onB := newID("onb")
	rc := controller(onB, n.image, 3, n.labels)
	rc.DesiredState.NodeSelector = map[string]string{"zone": "b"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, onB, 0, 3)

	n.a.rcctl(t, "", "scale", web, "--replicas", "1")
	testpoll.Eventually(t, 90*time.Second, func() error {
		if a, b := runningOn(t, n.cliA, web), runningOn(t, n.cliB, web); a+b != 1 {
			return fmt.Errorf("running: %d on a, %d on b; want 1 in all", a, b)
		}
		return nil
	})
	for _, id := range []string{web, onB} {
		n.a.rcctl(t, "", "delete", id)
		n.waitSpread(t, id, 0, 0)
	}
}

func TestTwoNodesHostPortRunsOnePerNode(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t, "--allow-host-ports")
	id := newID("hostport")
	rc := controller(id, n.image, 3, n.labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports[0].HostPort = freePort(t)
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 1, 1)
	waitForStatus(t, n.a, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionReplicaFailure)
		if st.Replicas != 2 || c == nil || c.Reason != api.ReasonUnschedulable {
			return fmt.Errorf("replicas %d, ReplicaFailure %+v; want 2 and the third Unschedulable", st.Replicas, c)
		}
		return nil
	})
}

func TestTwoNodesDeadNodeSlotsMoveAndComeBack(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("dead")
	n.a.rcctl(t, controllerJSON(t, id, n.image, 4, n.labels), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 2)

	n.b.kill(t)
	moved := testpoll.Eventually(t, 90*time.Second, func() error {
		if a := runningOn(t, n.cliA, id); a != 4 {
			return fmt.Errorf("%d running on a, want b's slots moved there too", a)
		}
		return nil
	})
	t.Logf("b's slots ran on a %s after b's manager was killed (lease %s, grace %s)", moved.Round(time.Millisecond), multiLease, multiGrace)
	if b := runningOn(t, n.cliB, id); b != 2 {
		t.Errorf("%d running on b while its manager is down, want its 2 left alone", b)
	}

	n.b.exec(t, n.argsB([]string{"--etcd-servers", n.b.etcdURL, "--leader-elect-lease-duration", multiLease, "--node-grace", multiGrace.String()}))
	n.waitSpread(t, id, 4, 0)
	// back, b is no longer gone: the leader removed its record
	testpoll.Eventually(t, 30*time.Second, func() error {
		if out := n.a.rcctl(t, "", "nodes"); strings.Contains(out, "Gone") || strings.Contains(out, "last containers") {
			return fmt.Errorf("b came back and is still shown gone:\n%s", out)
		}
		return nil
	})
}

func TestTwoNodesRollingUpdateKeepsTheBounds(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("roll")
	rc := controller(id, n.image, 4, n.labels)
	rc.DesiredState.MinReadySeconds = 1
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MonitorSeconds: new(1)} // each step waits minReadySeconds only
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 2)

	var fewest, most atomic.Int64
	fewest.Store(4)
	stop := sampleRunning(t, n, id, func(onA, onB []string) {
		live := int64(len(onA) + len(onB))
		fewest.Store(min(fewest.Load(), live))
		most.Store(max(most.Load(), live))
	})
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "e2e-v2"}}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.a.rcctl(t, "", "rollout", "status", id, "--timeout", "120s")
	stop()
	if fewest.Load() < 3 || most.Load() > 4 {
		t.Errorf("during the rollout over both engines: between %d and %d running; want between 3 and 4", fewest.Load(), most.Load())
	}
	n.waitSpread(t, id, 2, 2)
}

func TestTwoNodesIsolatedNodeStopsItsContainersFirst(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t, "--stop-when-isolated")
	id := newID("isolated")
	n.a.rcctl(t, controllerJSON(t, id, n.image, 4, n.labels), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 2)

	var twice atomic.Value // the first slot seen live on both engines
	stop := sampleRunning(t, n, id, func(onA, onB []string) {
		for _, slot := range onA {
			if slices.Contains(onB, slot) && twice.Load() == nil {
				twice.Store(slot)
			}
		}
	})
	n.proxy.Cut()
	start := time.Now()
	stopped := n.waitSpreadAfter(t, id, func(a, b int) bool { return b == 0 })
	n.waitSpreadAfter(t, id, func(a, b int) bool { return a == 4 })
	t.Logf("cut off from etcd: b removed its containers after %s, a ran all 4 after %s", stopped.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	n.proxy.Restore()
	// b is back: its slots are a's now, and it starts none of them again
	holdFor(t, 5*time.Second, func() error {
		if b := runningOn(t, n.cliB, id); b != 0 {
			return fmt.Errorf("%d running on b after it came back, want none: its slots moved", b)
		}
		return nil
	})
	stop()
	if slot := twice.Load(); slot != nil {
		t.Errorf("slot %v ran on both engines at once", slot)
	}
}

// waitSpreadAfter waits until ok holds of the running counts on a and b,
// and returns how long that took.
func (n *twoNodes) waitSpreadAfter(t *testing.T, id string, ok func(a, b int) bool) time.Duration {
	t.Helper()
	return testpoll.Eventually(t, 90*time.Second, func() error {
		a, b := runningOn(t, n.cliA, id), runningOn(t, n.cliB, id)
		if !ok(a, b) {
			return fmt.Errorf("running: %d on a, %d on b", a, b)
		}
		return nil
	})
}

// sampleEvery is how often sampleRunning lists both engines: the windows
// it looks for last as long as a stop or a create, tens of milliseconds
// at least. Listing without a pause took a quarter of a core of the main
// engine's dockerd per test sampling (250 lists a second), in a suite
// the engines' CPU bounds.
const sampleEvery = 20 * time.Millisecond

// sampleRunning calls seen with the slots of id's running containers on
// each engine, every sampleEvery, until the returned stop is called.
// Engine a is listed first: where a only gains containers (the isolation
// test), a slot seen on a, then on b, ran on both at the moment b was
// listed.
func sampleRunning(t *testing.T, n *twoNodes, id string, seen func(onA, onB []string)) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			onA, errA := runningSlots(t.Context(), n.cliA, id)
			onB, errB := runningSlots(t.Context(), n.cliB, id)
			if err := errors.Join(errA, errB); err != nil {
				if t.Context().Err() != nil {
					return // the test is ending: it failed before it stopped the sampler
				}
				t.Errorf("sampler: %v", err)
				continue
			}
			seen(onA, onB)
		}
	})
	stop = sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	t.Cleanup(stop) // a test that fails on the way never outlives its sampler
	return stop
}

// freePort returns a TCP port that was free on the host a moment ago,
// below the ephemeral range.
func freePort(t *testing.T) int {
	t.Helper()
	_, port, err := net.SplitHostPort(etcdtest.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
