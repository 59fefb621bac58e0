package e2e

// The defects that two deciders caused (the leader placing slots while
// each node also decided counts and rollout steps from its peers'
// reports), on real Docker: each failed before the leader became the one
// decider (docs/NODES.md).

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
)

// A nodeSelector change moves slots whose containers take 3 s to stop:
// the new node must not start a slot while the old one still stops it.
func TestTwoNodesSelectorMoveWithSlowStopsNeverRunsASlotTwice(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("slowmove")
	rc := controller(id, n.image, 3, n.labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/task", "--listen", ":8080", "--stop-delay", "3s"}
	rc.DesiredState.NodeSelector = map[string]string{"zone": "a"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 3, 0)

	var twice atomic.Value // the first slot seen running on both engines
	var samples atomic.Int64
	var fewest atomic.Int64 // the fewest slots seen running over both engines
	fewest.Store(3)
	stop := sampleRunning(t, n, id, func(onA, onB []string) {
		samples.Add(1)
		running := len(onA)
		for _, slot := range onB {
			if !slices.Contains(onA, slot) {
				running++
			}
		}
		if int64(running) < fewest.Load() {
			fewest.Store(int64(running))
		}
		for _, slot := range onA {
			if slices.Contains(onB, slot) && twice.Load() == nil {
				twice.Store(fmt.Sprintf("%s (a: %v, b: %v)", slot, onA, onB))
			}
		}
	})
	rc.DesiredState.NodeSelector = map[string]string{"zone": "b"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	took := n.waitSpreadAfter(t, id, func(a, b int) bool { return a == 0 && b == 3 })
	stop()
	t.Logf("moved 3 slow-stopping slots from a to b in %s, %d samples, at least %d running", took.Round(time.Millisecond), samples.Load(), fewest.Load())
	if slot := twice.Load(); slot != nil {
		t.Errorf("slot %v ran on both engines at once", slot)
	}
	// maxUnavailable 1: the move is paced, one slot at a time
	if got := fewest.Load(); got < 2 {
		t.Errorf("%d of 3 slots running at one point of the move, want at least 2: a move is paced by maxUnavailable", got)
	}
}

// A scale-down removes a replica that is not ready (paused) and keeps the
// ready ones as they are: on one host the node used to trim its own slots
// to the lowest N before the leader picked the least useful.
func TestScaleDownRemovesAPausedReplicaAndKeepsTheReadyOnes(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("pausedscale")
	// the image's health check is off (controller): on a loaded engine a probe timing
	// out can make a ready replica not ready too, and of two not ready the
	// scale-down takes the higher slot
	d.rcctl(t, mustJSON(t, controller(id, image, 3, labels)), "apply", "-f", "-")
	before := waitForReplicas(t, cli, id, 3)
	if err := cli.ContainerPause(t.Context(), id+"-1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.ContainerUnpause(t.Context(), id+"-1") })
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.ReadyReplicas != 2 {
			return fmt.Errorf("%d ready, want 2 with %s-1 paused", st.ReadyReplicas, id)
		}
		return nil
	})

	d.rcctl(t, "", "scale", id, "--replicas", "2")
	after := waitForNames(t, cli, map[string]string{api.LabelController: id}, id+"-2", id+"-3")
	for _, name := range []string{id + "-2", id + "-3"} {
		if after[name].ID != before[name].ID {
			t.Errorf("%s was replaced (%.12s, then %.12s): a ready replica went instead of the paused one", name, before[name].ID, after[name].ID)
		}
	}
	holdFor(t, 3*time.Second, func() error {
		got := labelled(t, cli, map[string]string{api.LabelController: id})
		if len(got) != 2 || got[id+"-2"].ID != before[id+"-2"].ID || got[id+"-3"].ID != before[id+"-3"].ID {
			return fmt.Errorf("containers %v, want %s-2 and %s-3 as they were", names(got), id, id)
		}
		return nil
	})
}

// A rollout and a scale-up together, over two engines: never more than
// replicas + maxSurge live. The surge room used to subtract only this
// node's missing creates.
func TestTwoNodesRolloutWithAScaleUpStaysWithinReplicasPlusSurge(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("rollscale")
	rc := controller(id, n.image, 4, n.labels)
	surge, unavailable := intstr.FromInt(1), intstr.FromInt(0)
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &surge, MaxUnavailable: &unavailable, MonitorSeconds: new(1)}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 2)

	var most atomic.Int64
	stop := sampleRunning(t, n, id, func(onA, onB []string) {
		most.Store(max(most.Load(), int64(len(onA)+len(onB))))
	})
	rc.DesiredState.Replicas = 6
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "e2e-v2"}}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.a.rcctl(t, "", "rollout", "status", id, "--timeout", "120s")
	stop()
	if got := most.Load(); got > 7 {
		t.Errorf("%d running at once during the rollout and scale-up, want at most 7 (6 replicas + maxSurge 1)", got)
	}
	n.waitSpreadAfter(t, id, func(a, b int) bool { return a+b == 6 })
}

// A template whose containers start and exit a second later never takes a
// second old replica down: a new container counts for the next step only
// once it has run ready for monitorSeconds (5 by default).
func TestRolloutOfATemplateThatExitsAtOnceKeepsTheOldReplicas(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("exitsoon")
	good := controller(id, image, 3, labels)
	waitForAvailable(t, cli, d, good, applyRC(t, d, good))
	goodHash := api.TemplateHash(&good.DesiredState.TaskTemplate)

	s := startSampler(t, cli, id, bounds{maxLive: 3, check: oldRunning(goodHash, 2)})
	bad := cloneRC(t, good)
	bad.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/task", "--listen", ":8080", "--exit-after", "1s"}
	applyRC(t, d, bad)
	// long enough for several crashes of the new template, and for the
	// steps a started container used to allow
	holdFor(t, 15*time.Second, func() error {
		return oldRunning(goodHash, 2)(slices.Collect(maps.Values(containers(t, cli, id))))
	})
	s.stop(t)
}

func names(m map[string]container.Summary) []string {
	out := make([]string, 0, len(m))
	for name := range m {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
