package e2e

// Tasks of several containers, their volumes and the memory they reserve
// (docs/CONTRACT.md, Tasks), on the real engine.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// waitForTasks waits until the controller runs exactly slots 1..n, each
// as a first container and its prober, the prober in the first's network
// and, if healthy, healthy too (it reaches the first on 127.0.0.1). It
// returns the containers by name.
func waitForTasks(t *testing.T, cli *client.Client, id string, n int, healthy bool, within time.Duration) map[string]container.Summary {
	t.Helper()
	var got map[string]container.Summary
	testpoll.Eventually(t, within, func() error {
		got = containers(t, cli, id)
		if len(got) != 2*n {
			return fmt.Errorf("%d containers (%v), want %d", len(got), names(got), 2*n)
		}
		for slot := 1; slot <= n; slot++ {
			first, ok := got[fmt.Sprintf("%s-%d", id, slot)]
			side, sok := got[fmt.Sprintf("%s-%d.prober", id, slot)]
			switch {
			case !ok || !sok:
				return fmt.Errorf("slot %d is not whole: %v", slot, names(got))
			case first.State != "running" || side.State != "running":
				return fmt.Errorf("slot %d: %s and %s", slot, first.State, side.State)
			case side.HostConfig.NetworkMode != "container:"+first.ID:
				return fmt.Errorf("slot %d: the prober's network mode is %q, want container:%s", slot, side.HostConfig.NetworkMode, first.ID)
			case healthy && !strings.Contains(side.Status, "(healthy)"):
				return fmt.Errorf("slot %d: the prober is %q, not healthy yet", slot, side.Status)
			}
		}
		return nil
	})
	return got
}

// deleteLeavesNothing deletes controller id and waits until none of its
// containers and none of its tasks' volumes are left.
func deleteLeavesNothing(t *testing.T, d *daemon, cli *client.Client, id string, within time.Duration) {
	t.Helper()
	d.rcctl(t, "", "delete", id)
	testpoll.Eventually(t, within, func() error {
		if c := containers(t, cli, id); len(c) > 0 {
			return fmt.Errorf("containers left: %v", names(c))
		}
		if v := volumesOf(t, cli, id); len(v) > 0 {
			return fmt.Errorf("volumes left: %v", v)
		}
		return nil
	})
}

// volumesOf lists the Docker volumes of controller id.
func volumesOf(t *testing.T, cli *client.Client, id string) []string {
	t.Helper()
	resp, err := cli.VolumeList(t.Context(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id))})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range resp.Volumes {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

func TestATaskOfTwoContainersRunsHealsAndGoesWhole(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	id := newID("sidecar")
	t.Cleanup(func() { removeVolumes(t, cli, id) }) // after the containers' cleanup: a volume in use stays
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)

	d.rcctl(t, mustJSON(t, demospec.SidecarController(id, image, 2, labels)), "apply", "-f", "-")
	before := waitForTasks(t, cli, id, 2, true, 90*time.Second)
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 2 || st.ReadyReplicas != 2 {
			return fmt.Errorf("replicas %d, ready %d; want 2 tasks, both ready", st.Replicas, st.ReadyReplicas)
		}
		return nil
	})
	if got, want := volumesOf(t, cli, id), []string{id + "-1.scratch", id + "-2.scratch"}; !slices.Equal(got, want) {
		t.Errorf("volumes %v, want %v", got, want)
	}
	time.Sleep(10 * time.Second)
	for name, c := range containers(t, cli, id) {
		if before[name].ID != c.ID || c.State != "running" {
			t.Errorf("%s changed or stopped within 10 s: %s (%s)", name, c.State, c.ID[:12])
		}
	}

	start := time.Now()
	victim := before[id+"-1.prober"]
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	after := waitForTasks(t, cli, id, 2, false, 30*time.Second)
	if after[id+"-1"].ID == before[id+"-1"].ID {
		t.Errorf("%s-1 was kept: a task whose sidecar went must be replaced whole", id)
	}
	if after[id+"-2"].ID != before[id+"-2"].ID {
		t.Errorf("%s-2 was replaced too", id)
	}
	t.Logf("slot 1 whole again %s after docker rm -f of its sidecar", time.Since(start).Round(time.Millisecond))

	deleteLeavesNothing(t, d, cli, id, 60*time.Second)
}

func TestRollingUpdateOfATwoContainerTaskKeepsTheBounds(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	id := newID("sideroll")
	t.Cleanup(func() { removeVolumes(t, cli, id) }) // after the containers' cleanup: a volume in use stays
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)

	rc := demospec.SidecarController(id, image, 3, labels)
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: new(intstr.FromInt32(1)), MaxUnavailable: new(intstr.FromInt32(0)), MonitorSeconds: new(1)}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	waitForTasks(t, cli, id, 3, true, 90*time.Second)

	var most, fewest atomic.Int64
	fewest.Store(3)
	stop := watchTasks(t, cli, id, func(firsts, probers int) {
		most.Store(max(most.Load(), int64(firsts)))
		fewest.Store(min(fewest.Load(), int64(min(firsts, probers))))
	})
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "v2"}}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	d.rcctl(t, "", "rollout", "status", id, "--timeout", "180s")
	stop()
	waitForTasks(t, cli, id, 3, true, 60*time.Second)
	if most.Load() > 4 || fewest.Load() < 3 {
		t.Errorf("during the rollout: between %d and %d whole tasks running; want 3 to 4 (maxSurge 1, maxUnavailable 0)", fewest.Load(), most.Load())
	}
}

// watchTasks samples the controller's running first containers and
// probers every 50ms until stop.
func watchTasks(t *testing.T, cli *client.Client, id string, see func(firsts, probers int)) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			list, err := cli.ContainerList(t.Context(), container.ListOptions{
				Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id), filters.Arg("status", "running"))})
			if err != nil {
				continue
			}
			var firsts, probers int
			for _, c := range list {
				if c.Labels[api.LabelContainer] == "prober" {
					probers++
				} else {
					firsts++
				}
			}
			see(firsts, probers)
		}
	}()
	return func() { close(done); <-finished }
}

// removeVolumes removes what a failed test left of id's volumes; it runs
// in a cleanup, after the test's context ended.
func removeVolumes(t *testing.T, cli *client.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
	defer cancel()
	resp, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id))})
	if err != nil {
		t.Errorf("list the volumes %s left: %v", id, err)
		return
	}
	for _, v := range resp.Volumes {
		t.Logf("removing volume %s left behind", v.Name)
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil {
			t.Errorf("remove volume %s: %v", v.Name, err)
		}
	}
}

func TestMemoryReservationLeavesTheThirdTaskUnschedulable(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	info, err := cli.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	id := newID("mem")
	rc := controller(id, image, 3, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Memory = info.MemTotal * 4 / 10
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	st := waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionReplicaFailure)
		if st.Replicas != 2 || c == nil || c.Reason != api.ReasonUnschedulable || !strings.Contains(c.Message, "memory") {
			return fmt.Errorf("replicas %d, ReplicaFailure %+v; want 2 and the third Unschedulable for memory", st.Replicas, c)
		}
		return nil
	})
	t.Logf("the third: %s", st.FindCondition(api.ConditionReplicaFailure).Message)
	if got := containers(t, cli, id); len(got) != 2 {
		t.Errorf("containers %v, want 2", names(got))
	}
}

func TestTwoNodesMemoryReservationPutsTheThirdTaskOnTheOtherNode(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	info, err := n.cliA.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	id := newID("mem2")
	rc := controller(id, n.image, 3, n.labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Memory = info.MemTotal * 4 / 10
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpreadAfter(t, id, func(a, b int) bool { return a+b == 3 && a >= 1 && b >= 1 })
	waitForStatus(t, n.a, id, func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 3 || st.FindCondition(api.ConditionReplicaFailure) != nil {
			return fmt.Errorf("replicas %d, conditions %+v; want 3 and no ReplicaFailure", st.Replicas, st.Conditions)
		}
		return nil
	})
}
