package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// newID is a controller id unique to the test run.
func newID(name string) string {
	return fmt.Sprintf("e2e-%s-%s", dockertest.RunID(), name)
}

func TestScaleUpAndDownKeepsExactContainers(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("scale")

	// a scale-down keeps slots 1..n when every replica is ready: the
	// image's health check is off (controller), since under a loaded engine its probe
	// can time out and make a low slot not ready, to be taken first
	d.rcctl(t, mustJSON(t, controller(id, image, 0, labels)), "apply", "-f", "-")
	waitForReplicas(t, cli, id, 0)
	for _, n := range []int{3, 5, 1, 0} {
		d.rcctl(t, "", "scale", id, "--replicas", fmt.Sprint(n))
		got := waitForReplicas(t, cli, id, n)
		for name, c := range got {
			for k, v := range labels {
				if c.Labels[k] != v {
					t.Errorf("%s: label %s=%q, want %q", name, k, c.Labels[k], v)
				}
			}
		}
	}
	out := d.rcctl(t, "", "get", id)
	if !strings.Contains(out, id) {
		t.Errorf("rcctl get does not list %s:\n%s", id, out)
	}
}

func TestContainerRemovedOutOfBandIsReplaced(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, "--sync-period", "2s")
	id := newID("replace")

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	before := waitForReplicas(t, cli, id, 2)
	victim := before[id+"-1"]
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	testpoll.Eventually(t, 60*time.Second, func() error {
		after := containers(t, cli, id)
		c, ok := after[id+"-1"]
		if !ok || c.ID == victim.ID || c.State != "running" {
			return fmt.Errorf("%s-1 not replaced yet", id)
		}
		return nil
	})
	waitForReplicas(t, cli, id, 2)
}

func TestDeletingControllerRemovesItsContainers(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("delete")

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	waitForReplicas(t, cli, id, 2)
	d.rcctl(t, "", "delete", id)
	waitForReplicas(t, cli, id, 0)
	if _, err := d.tryRcctl("", "get", id); err == nil {
		t.Errorf("rcctl get of a deleted controller succeeded")
	}
}

func TestHandStartedContainerWithSameLabelsIsNeverTouched(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("byhand")
	ctx := t.Context()

	// the same user labels as the controller's template, but no
	// replicationController label
	handLabels := map[string]string{"name": id}
	for k, v := range labels {
		handLabels[k] = v
	}
	created, err := cli.ContainerCreate(ctx, &container.Config{
		Image: image, Cmd: []string{"/task", "--listen", ":8080"}, Labels: handLabels,
	}, nil, nil, nil, id+"-byhand")
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	waitForReplicas(t, cli, id, 2)
	d.rcctl(t, "", "scale", id, "--replicas", "0")
	waitForReplicas(t, cli, id, 0)
	d.rcctl(t, "", "delete", id)
	waitForReplicas(t, cli, id, 0)

	inspect, err := cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		t.Fatalf("the hand-started container is gone: %v", err)
	}
	if !inspect.State.Running {
		t.Errorf("the hand-started container is %s, want running", inspect.State.Status)
	}
}

func TestInvalidSpecIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	dockertest.RequireDocker(t)
	d := startDaemon(t)
	id := newID("invalid")
	bad := strings.Replace(controllerJSON(t, id, "demo-task:latest", 1, nil), `"replicas":1`, `"replicas":-1`, 1)

	_, err := d.tryRcctl(bad, "apply", "-f", "-")
	if err == nil || !strings.Contains(err.Error(), "desiredState.replicas") {
		t.Fatalf("rcctl apply of replicas -1 = %v, want an error naming desiredState.replicas", err)
	}
	if _, err := d.tryRcctl("", "get", id); err == nil {
		t.Errorf("the refused controller was written")
	}
}
