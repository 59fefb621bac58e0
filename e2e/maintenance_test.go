package e2e

// Node maintenance on two real engines (docs/CONTRACT.md, Node
// maintenance): cordon, drain and labels written to
// /registry/nodeconfig/<node> while the managers run, and every move
// paced.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// availability reads a node's availability as rcctl nodes -o json shows
// it, from the node's key.
func (n *twoNodes) availability(t *testing.T, node string) api.NodeAvailability {
	t.Helper()
	var list struct {
		Items []struct {
			Name   string `json:"name"`
			Status struct {
				Availability api.NodeAvailability `json:"availability"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(n.a.rcctl(t, "", "nodes", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, it := range list.Items {
		if it.Name == node {
			return it.Status.Availability
		}
	}
	t.Fatalf("rcctl nodes does not list %s", node)
	return ""
}

func TestTwoNodesCordonedNodeGetsNoNewSlotUntilUncordoned(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	if out := n.a.rcctl(t, "", "cordon", "a"); out != "node/a cordoned\n" {
		t.Errorf("cordon a printed %q", out)
	}
	id := newID("cordon")
	n.a.rcctl(t, controllerJSON(t, id, n.image, 4, n.labels), "apply", "-f", "-")
	n.waitSpread(t, id, 0, 4)
	if a := n.availability(t, "a"); a != api.NodePause {
		t.Errorf("a's key holds %q, want pause", a)
	}
	if out := n.a.rcctl(t, "", "nodes"); !strings.Contains(out, "Ready,Paused") {
		t.Errorf("rcctl nodes does not show a paused:\n%s", out)
	}
	// the leader, whichever it is, exports the availability
	metrics := httpGet(t, "http://"+n.a.metricsAddr+"/metrics") + httpGet(t, "http://"+n.b.metricsAddr+"/metrics")
	for _, series := range []string{`replication_manager_node_availability{availability="pause",node="a"} 1`,
		`replication_manager_node_availability{availability="active",node="b"} 1`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("no manager exports %s", series)
		}
	}

	n.a.rcctl(t, "", "uncordon", "a")
	n.a.rcctl(t, "", "scale", id, "--replicas", "6")
	n.waitSpread(t, id, 2, 4)
}

func TestTwoNodesDrainMovesEverySlotPacedAndExitsZero(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	n.a.rcctl(t, "", "cordon", "b")
	id := newID("drain")
	rc := controller(id, n.image, 4, n.labels)
	c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	c.Command = append(c.Command, "--stop-delay", "2s") // each container takes 2 s to stop
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 4, 0)
	n.a.rcctl(t, "", "uncordon", "b")
	waitForStatus(t, n.a, id, func(st *api.ReplicationControllerStatus) error {
		if st.AvailableReplicas != 4 {
			return fmt.Errorf("%d available, want 4 before the drain", st.AvailableReplicas)
		}
		return nil
	})

	var fewest atomic.Int64
	fewest.Store(4)
	var twice atomic.Value // the first slot seen running on both engines
	stop := sampleRunning(t, n, id, func(onA, onB []string) {
		fewest.Store(min(fewest.Load(), int64(len(onA)+len(onB))))
		for _, slot := range onA {
			if slices.Contains(onB, slot) && twice.Load() == nil {
				twice.Store(slot)
			}
		}
	})
	start := time.Now()
	out := n.a.rcctl(t, "", "drain", "a", "--timeout", "120s")
	took := time.Since(start)
	stop()
	t.Logf("rcctl drain a took %s:\n%s", took.Round(time.Millisecond), out)
	if !strings.HasSuffix(out, "node/a drained\n") {
		t.Errorf("drain printed %q, want it to end with node/a drained", out)
	}
	n.waitSpread(t, id, 0, 4)
	if f := fewest.Load(); f < 3 {
		t.Errorf("during the drain %d running at the fewest, want 3 or more (maxUnavailable 1)", f)
	}
	if slot := twice.Load(); slot != nil {
		t.Errorf("slot %v ran on both engines at once", slot)
	}
	if a := n.availability(t, "a"); a != api.NodeDrain {
		t.Errorf("a's key holds %q after the drain, want drain", a)
	}
	if out := n.a.rcctl(t, "", "describe", id); strings.Count(out, "moves off a (drain: node a is drained)") != 4 {
		t.Errorf("describe does not show a Moved event per slot with its reason:\n%s", out)
	}
}

func TestTwoNodesLabelAtRunTimeMakesAnUnschedulableSlotRun(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("zonec")
	rc := controller(id, n.image, 2, n.labels)
	rc.DesiredState.NodeSelector = map[string]string{"zone": "c"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	waitForStatus(t, n.a, id, func(st *api.ReplicationControllerStatus) error {
		if c := st.FindCondition(api.ConditionReplicaFailure); c == nil || c.Reason != api.ReasonUnschedulable {
			return fmt.Errorf("ReplicaFailure %+v, want Unschedulable: no node is in zone c", c)
		}
		return nil
	})

	if out := n.a.rcctl(t, "", "label", "node", "b", "zone=c"); out != "node/b labeled\n" {
		t.Errorf("label printed %q", out)
	}
	start := time.Now()
	testpoll.Eventually(t, 30*time.Second, func() error {
		if a, b := runningOn(t, n.cliA, id), runningOn(t, n.cliB, id); a != 0 || b != 2 {
			return fmt.Errorf("running: %d on a, %d on b; want 0 and 2", a, b)
		}
		return nil
	})
	t.Logf("both ran on b %s after the label", time.Since(start).Round(time.Millisecond))
	if out := n.a.rcctl(t, "", "nodes"); !strings.Contains(out, "zone=c(key)") {
		t.Errorf("rcctl nodes does not mark b's zone as the key's:\n%s", out)
	}
}

func TestTwoNodesDrainThatCannotFinishNamesTheSlots(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("stuck")
	rc := controller(id, n.image, 2, n.labels)
	rc.DesiredState.NodeSelector = map[string]string{"zone": "a"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 0)

	out, err := n.a.tryRcctl("", "drain", "a", "--timeout", "60s")
	if err == nil {
		t.Fatalf("drain of the only node in zone a succeeded:\n%s", out)
	}
	for _, slot := range []string{id + "-1", id + "-2"} {
		if !strings.Contains(err.Error(), slot) {
			t.Errorf("drain failed without naming %s: %v", slot, err)
		}
	}
	if !strings.Contains(err.Error(), "a: draining") {
		t.Errorf("drain failed without saying why: %v", err)
	}
	// the slots stay where they are, running
	n.waitSpread(t, id, 2, 0)
}
