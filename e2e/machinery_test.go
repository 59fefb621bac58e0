package e2e

// End-to-end tests of the machinery of issue 3: event-driven replacement,
// dead containers, crash loops, fencing between managers, readiness.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestRemovedReplicaIsReplacedWellWithinTheResyncPeriod(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, "--sync-period", "5m") // only events can explain a fast replacement
	id := newID("rmf")

	d.rcctl(t, controllerJSON(t, id, image, 3, labels), "apply", "-f", "-")
	before := waitForReplicas(t, cli, id, 3)
	victim := before[id+"-2"]
	start := time.Now()
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	testpoll.Eventually(t, 30*time.Second, func() error {
		c, ok := containers(t, cli, id)[id+"-2"]
		if !ok || c.ID == victim.ID || c.State != "running" {
			return fmt.Errorf("%s-2 not replaced yet", id)
		}
		return nil
	})
	t.Logf("replacement after docker rm -f: %s", time.Since(start).Round(time.Millisecond))
}

func TestStoppedReplicasAreReplacedAndDeadOnesDoNotPileUp(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, "--sync-period", "5m")
	id := newID("stop")
	ctx := t.Context()

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	for round := range 3 {
		running := waitForRunning(t, cli, id, 2)
		victim := running[round%2]
		timeout := 1
		if err := cli.ContainerStop(ctx, victim.ID, container.StopOptions{Timeout: &timeout}); err != nil {
			t.Fatal(err)
		}
		testpoll.Eventually(t, 30*time.Second, func() error {
			for _, c := range containers(t, cli, id) {
				if c.ID == victim.ID && c.State == "running" {
					return fmt.Errorf("victim still running")
				}
			}
			if n := len(runningOf(containers(t, cli, id))); n != 2 {
				return fmt.Errorf("%d running, want 2", n)
			}
			return nil
		})
	}
	all := containers(t, cli, id)
	dead := len(all) - len(runningOf(all))
	if dead > 1 {
		t.Errorf("%d dead containers kept after 3 stops, want at most 1", dead)
	}
}

func TestKillNineMidScaleUpThenRestartLeavesExactlyTwelve(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, "--burst-replicas", "4")
	id := newID("kill9")

	d.rcctl(t, controllerJSON(t, id, image, 12, labels), "apply", "-f", "-")
	testpoll.Eventually(t, 60*time.Second, func() error {
		if n := len(containers(t, cli, id)); n < 3 {
			return fmt.Errorf("%d containers so far", n)
		}
		return nil
	})
	d.kill(t)
	t.Logf("killed with %d containers", len(containers(t, cli, id)))

	d.start(t, "--burst-replicas", "4")
	waitForReplicas(t, cli, id, 12)
}

func TestTwoManagersNeverExceedTheDesiredCount(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	a := startDaemon(t, "--leader-elect=false")
	// the second shares the first's etcd; without leader election both
	// act, so only the slot names fence them
	b := &daemon{etcdURL: a.etcdURL, metricsAddr: etcdtest.FreeAddr(t), logs: &syncbuf.Buffer{}}
	b.startShared(t, "--leader-elect=false")
	id := newID("two")

	var maxSeen atomic.Int64
	var limit atomic.Int64
	watch := watchCount(t, cli, id, func(n int) {
		if int64(n) > maxSeen.Load() {
			maxSeen.Store(int64(n))
		}
		if int64(n) > limit.Load() {
			t.Errorf("%d live containers, more than the desired %d", n, limit.Load())
		}
	})
	defer watch()

	limit.Store(6)
	a.rcctl(t, mustJSON(t, withImageHealthCheck(controller(id, image, 6, labels))), "apply", "-f", "-")
	waitForHealthy(t, cli, id, 6)
	a.rcctl(t, "", "scale", id, "--replicas", "3")
	// which 3 stay is not the point: the two managers share one node
	// name, so each report overwrites the other's, and the slots one of
	// them does not report rank as not running in the scale-down
	waitForRunning(t, cli, id, 3)
	limit.Store(8)
	a.rcctl(t, "", "scale", id, "--replicas", "8")
	waitForReplicas(t, cli, id, 8)
	t.Logf("most live containers seen: %d", maxSeen.Load())
}

func TestCrashLoopingImageCreatesABoundedNumberOfContainers(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("crash")

	var creates atomic.Int64
	stop := countEvents(t, cli, id, "create", &creates)
	defer stop()
	rc := controller(id, image, 5, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/task", "--exit-after", "300ms"}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")

	// the window opens with the first containers, however long a loaded
	// engine takes to make them
	testpoll.Eventually(t, time.Minute, func() error {
		if n := creates.Load(); n < 5 {
			return fmt.Errorf("%d of the first 5 containers created", n)
		}
		return nil
	})
	const window = 20 * time.Second
	time.Sleep(window) // the point is what happens over time
	n := creates.Load()
	t.Logf("containers created in %s of crash loop with 5 replicas: %d", window, n)
	// each slot backs off on its own: its first create, then one after
	// each crash (300 ms) once 100 ms, 200 ms, 400 ms, ... have passed, 8
	// in 20 s; 9 each allows for the first ones' spread
	if n > 5*9 {
		t.Errorf("%d containers created in %s, want at most 9 per slot (<= 45)", n, window)
	}
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if c := st.FindCondition(api.ConditionCrashLoop); c == nil || !strings.Contains(c.Message, "code 3") {
			return fmt.Errorf("CrashLoop condition = %+v, want one naming exit code 3", c)
		}
		return nil
	})
	// one dead container is kept for inspection; one that exited a moment
	// ago may not be handled yet while the slot's sync is creating others
	// on a loaded engine, so the count is looked at until it holds, never
	// growing with the loop. The wait is a minute: in CI, beside the whole
	// suite, one create took 9 s, and 15 s saw only the sync that was
	// creating, with 4 dead containers it had not come to yet
	testpoll.Eventually(t, time.Minute, func() error {
		all := containers(t, cli, id)
		if dead := len(all) - len(runningOf(all)); dead > 1 {
			return fmt.Errorf("%d dead containers kept, want at most 1", dead)
		}
		return nil
	})
}

func TestMissingImageGivesReplicaFailureNamingIt(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	dockertest.RequireDocker(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("noimage")
	image := "no-such-image-" + dockertest.RunID() + ":latest"

	rc := controller(id, image, 3, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = api.PullNever // no pull from the internet
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	testpoll.Eventually(t, 30*time.Second, func() error {
		st := d.status(t, id)
		if st == nil {
			return fmt.Errorf("no status yet")
		}
		c := st.FindCondition(api.ConditionReplicaFailure)
		if c == nil || c.Reason != api.ReasonCreateFailed || !strings.Contains(c.Message, image) {
			return fmt.Errorf("ReplicaFailure = %+v, want CreateFailed naming %s", c, image)
		}
		return nil
	})
	out := d.rcctl(t, "", "describe", id)
	if !strings.Contains(out, image) || !strings.Contains(out, "ReplicaFailure") {
		t.Errorf("describe does not show the failure:\n%s", out)
	}
}

func TestHealthCheckGatesReadiness(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, "--sync-period", "2s")
	good, bad := newID("healthy"), newID("unhealthy")

	rc := controller(good, image, 2, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{
		Test: api.Command{"CMD", "/task", "healthcheck"}, Interval: api.Duration(time.Second), Retries: 1,
	}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	rc = controller(bad, image, 2, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{
		Test: api.Command{"CMD", "/task", "healthcheck", "http://127.0.0.1:9/healthz"}, Interval: api.Duration(time.Second), Retries: 1,
	}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")

	waitForReplicas(t, cli, good, 2)
	waitForReplicas(t, cli, bad, 2)
	testpoll.Eventually(t, 30*time.Second, func() error {
		st := d.status(t, good)
		if st == nil || st.ReadyReplicas != 2 {
			return fmt.Errorf("healthy controller status %+v, want 2 ready", st)
		}
		return nil
	})
	testpoll.Eventually(t, 30*time.Second, func() error {
		for name, c := range containers(t, cli, bad) {
			if !strings.Contains(c.Status, "(unhealthy)") {
				return fmt.Errorf("%s is %q, not unhealthy yet", name, c.Status)
			}
		}
		return nil
	})
	testpoll.Eventually(t, 10*time.Second, func() error {
		st := d.status(t, bad)
		if st == nil || st.Replicas != 2 || st.ReadyReplicas != 0 {
			return fmt.Errorf("unhealthy controller status %+v, want 2 replicas, 0 ready", st)
		}
		return nil
	})
}

// waitForRunning waits for n running containers of id and returns them.
func waitForRunning(t *testing.T, cli dockerClient, id string, n int) []container.Summary {
	t.Helper()
	var out []container.Summary
	testpoll.Eventually(t, 60*time.Second, func() error {
		out = runningOf(containers(t, cli, id))
		if len(out) != n {
			return fmt.Errorf("%d running, want %d", len(out), n)
		}
		return nil
	})
	return out
}

func runningOf(all map[string]container.Summary) []container.Summary {
	var out []container.Summary
	for _, c := range all {
		if c.State == "running" {
			out = append(out, c)
		}
	}
	return out
}

// watchCount polls the number of live containers of id every 20ms and
// reports it to see, until the returned function is called.
func watchCount(t *testing.T, cli dockerClient, id string, see func(int)) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			list, err := cli.ContainerList(ctx, container.ListOptions{
				Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id)),
			})
			if err == nil {
				see(len(list))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// countEvents counts Docker events of one action for id's containers.
func countEvents(t *testing.T, cli dockerClient, id, action string, n *atomic.Int64) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	msgs, errs := cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", "container"),
		filters.Arg("label", api.LabelController+"="+id),
		filters.Arg("event", action),
	)})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-msgs:
				n.Add(1)
			case err := <-errs:
				_ = err // the stream ends with ctx: expected
				return
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
