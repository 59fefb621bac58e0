package e2e

// Init containers (docs/CONTRACT.md, Init containers), on the real engine.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// initTask is the demo controller whose task mounts an emptyDir at
// /scratch, with the init containers given.
func initTask(id, image string, replicas int, labels map[string]string, inits ...api.Container) *api.ReplicationController {
	rc := controller(id, image, replicas, labels)
	m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
	m.Volumes = []api.TaskVolume{{Name: "scratch"}}
	m.Containers[0].VolumeMounts = []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	m.InitContainers = inits
	return rc
}

// initContainersOf returns the controller's init containers, by name.
func initContainersOf(t *testing.T, cli *client.Client, id string) []string {
	t.Helper()
	var out []string
	for name, c := range containers(t, cli, id) {
		if api.IsInit(c.Labels) {
			out = append(out, name)
		}
	}
	return out
}

func TestAnInitContainerPreparesTheVolumeTheTasksHealthCheckNeeds(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	id := newID("init")
	t.Cleanup(func() { removeVolumes(t, cli, id) }) // after the containers' cleanup
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t) // before the daemon: its containers go after it stops
	d := startDaemon(t)

	rc := initTask(id, image, 2, labels, api.Container{
		Name: "fill", Image: image, Command: api.Command{"/task", "write", "/scratch/ready"},
		VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
	})
	// ready only once the init container's file is there
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{
		Test: api.Command{"/task", "exists", "/scratch/ready"}, Interval: api.Duration(time.Second),
	}
	start := time.Now()
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	testpoll.Eventually(t, 60*time.Second, func() error {
		st := d.status(t, id)
		if st == nil || st.ReadyReplicas != 2 {
			return fmt.Errorf("status %+v, want 2 ready replicas", st)
		}
		return nil
	})
	t.Logf("2 ready replicas %s after the apply", time.Since(start).Round(time.Millisecond))
	waitForHealthy(t, cli, id, 2) // exactly <id>-1 and <id>-2: no init container left
	if left := initContainersOf(t, cli, id); len(left) > 0 {
		t.Errorf("init containers left once the tasks run: %v", left)
	}
	if st := d.status(t, id); st.Replicas != 2 || st.FindCondition(api.ConditionReplicaFailure) != nil {
		t.Errorf("status %+v, want 2 replicas and no failure", st)
	}

	deleteLeavesNothing(t, d, cli, id, 60*time.Second)
}

func TestAFailingInitContainerIsReportedKeptAndTriedAgain(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	id := newID("initfail")
	t.Cleanup(func() { removeVolumes(t, cli, id) }) // after the containers' cleanup
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t) // before the daemon: its containers go after it stops
	d := startDaemon(t)

	// the demo task exits with code 3 after --exit-after, saying so
	rc := initTask(id, image, 1, labels, api.Container{
		Name: "check", Image: image, Command: api.Command{"/task", "--exit-after", "100ms"},
	})
	start := time.Now()
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	kept := id + "-1.init-check"
	var message string
	testpoll.Eventually(t, 30*time.Second, func() error {
		st := d.status(t, id)
		if st == nil {
			return fmt.Errorf("no status yet")
		}
		c := st.FindCondition(api.ConditionReplicaFailure)
		if c == nil || c.Reason != api.ReasonInitFailed {
			return fmt.Errorf("ReplicaFailure = %+v, want %s", c, api.ReasonInitFailed)
		}
		message = c.Message
		return nil
	})
	t.Logf("InitFailed %s after the apply: %s", time.Since(start).Round(time.Millisecond), message)
	for _, want := range []string{"check", kept, "code 3", "exiting after 100ms as asked"} {
		if !strings.Contains(message, want) {
			t.Errorf("InitFailed message %q does not say %q", message, want)
		}
	}

	// the failed one is kept under its name, no task runs, and the next
	// try makes another
	var first string
	testpoll.Eventually(t, 30*time.Second, func() error {
		all := containers(t, cli, id)
		if _, ok := all[id+"-1"]; ok {
			t.Fatalf("%s-1 exists although its init container fails: %v", id, names(all))
		}
		c, ok := all[kept]
		if !ok || c.State != "exited" || !strings.Contains(c.Status, "Exited (3)") {
			return fmt.Errorf("%s is %q (%v), want kept, exited with code 3", kept, c.Status, names(all))
		}
		if first == "" {
			first = c.ID
		}
		if c.ID == first {
			return fmt.Errorf("%s is still the first try's", kept)
		}
		return nil
	})
	if out := d.rcctl(t, "", "describe", id); !strings.Contains(out, api.ReasonInitFailed) {
		t.Errorf("describe does not show %s:\n%s", api.ReasonInitFailed, out)
	}

	// deleted: the kept init container goes with the controller, and
	// the task's volume with it
	deleteLeavesNothing(t, d, cli, id, 30*time.Second)
}

func TestAnInitContainerRunningWhenItsSlotGoesIsStoppedWithItsSignal(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	id := newID("initstop")
	t.Cleanup(func() { removeVolumes(t, cli, id) }) // after the containers' cleanup
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t) // before the daemon: its containers go after it stops
	d := startDaemon(t)

	// an init container that never ends on its own: a server
	grace := 7
	rc := initTask(id, image, 1, labels, api.Container{
		Name: "wait", Image: image, Command: api.Command{"/task", "--listen", ":8080"},
		StopSignal: "SIGINT", StopGracePeriodSeconds: &grace,
	})
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	name := id + "-1.init-wait"
	var initID string
	testpoll.Eventually(t, 30*time.Second, func() error {
		c, ok := containers(t, cli, id)[name]
		if !ok || c.State != "running" {
			return fmt.Errorf("%s is not running yet", name)
		}
		initID = c.ID
		return nil
	})
	inspect, err := cli.ContainerInspect(t.Context(), initID)
	if err != nil {
		t.Fatal(err)
	}
	if inspect.Config.StopSignal != "SIGINT" || inspect.Config.StopTimeout == nil || *inspect.Config.StopTimeout != grace {
		t.Errorf("the init container's stop signal %q and timeout %v, want SIGINT and %d", inspect.Config.StopSignal, inspect.Config.StopTimeout, grace)
	}
	if all := containers(t, cli, id); len(all) != 1 {
		t.Errorf("containers while the init container runs: %v, want it alone", names(all))
	}
	if st := d.status(t, id); st != nil && st.Replicas != 0 {
		t.Errorf("replicas %d while only the init container runs, want 0", st.Replicas)
	}

	start := time.Now()
	d.rcctl(t, "", "scale", id, "--replicas", "0")
	testpoll.Eventually(t, 20*time.Second, func() error {
		if all := containers(t, cli, id); len(all) > 0 {
			return fmt.Errorf("containers left: %v", names(all))
		}
		return nil
	})
	t.Logf("the init container stopped and removed %s after the scale to 0", time.Since(start).Round(time.Millisecond))
	// stays so: the task was never made
	time.Sleep(2 * time.Second)
	if all := containers(t, cli, id); len(all) > 0 {
		t.Errorf("containers after the scale to 0: %v, want none", names(all))
	}
}
