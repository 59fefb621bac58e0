package e2e

// The bounds of a move on two real engines (issue 26): a burst cap on the
// old node, and a manager stopped in the middle of a move.

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
)

// bothWays records what the samples of a move saw: a slot on both engines
// at once (and when), and the most containers running over both.
type bothWays struct {
	mu    sync.Mutex
	twice []string
	when  []time.Time
	most  int
}

func (w *bothWays) see(onA, onB []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.most = max(w.most, len(onA)+len(onB))
	for _, slot := range onA {
		if slices.Contains(onB, slot) {
			w.twice = append(w.twice, fmt.Sprintf("%s (a: %v, b: %v)", slot, onA, onB))
			w.when = append(w.when, time.Now())
		}
	}
}

// firstTwice returns the first slot seen on both engines before deadline
// (the zero time: ever), or "".
func (w *bothWays) firstTwice(deadline time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, at := range w.when {
		if deadline.IsZero() || at.Before(deadline) {
			return w.twice[i]
		}
	}
	return ""
}

// A burst cap on the old node used to hide the containers it had not
// removed yet from its report, and the leader placed their slots on the
// new node while they still ran.
func TestTwoNodesMoveUnderABurstOfOneNeverRunsASlotTwice(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t, "--burst-replicas", "1")
	id := newID("burstmove")
	rc := controller(id, n.image, 6, n.labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/task", "--listen", ":8080", "--stop-delay", "1s"}
	all := intstr.FromString("100%")
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxUnavailable: &all}
	rc.DesiredState.NodeSelector = map[string]string{"zone": "a"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 6, 0)

	var w bothWays
	stop := sampleRunning(t, n, id, w.see)
	rc.DesiredState.NodeSelector = map[string]string{"zone": "b"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	took := n.waitSpreadAfter(t, id, func(a, b int) bool { return a == 0 && b == 6 })
	stop()
	t.Logf("moved 6 slots under a burst of 1 in %s; at most %d running", took.Round(time.Millisecond), w.most)
	if slot := w.firstTwice(time.Time{}); slot != "" {
		t.Errorf("slot %s ran on both engines at once", slot)
	}
	if w.most > 6 {
		t.Errorf("%d containers running at once, want at most 6", w.most)
	}
}

// A node's reports go with its lease: when its manager was stopped in the
// middle of a move, the leader placed the slots it still ran elsewhere at
// once. They stay held for --node-grace; after the manager comes back,
// everything converges.
func TestTwoNodesManagerStoppedDuringAMoveHoldsItsSlotsForTheGrace(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	id := newID("stopmove")
	rc := controller(id, n.image, 3, n.labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/task", "--listen", ":8080", "--stop-delay", "3s"}
	rc.DesiredState.NodeSelector = map[string]string{"zone": "b"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpread(t, id, 0, 3)

	var w bothWays
	stop := sampleRunning(t, n, id, w.see)
	defer stop()
	rc.DesiredState.NodeSelector = map[string]string{"zone": "a"}
	n.a.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	n.waitSpreadAfter(t, id, func(a, b int) bool { return a >= 1 }) // the move is under way
	n.b.stop(t)
	stopped := time.Now()

	// within the grace, b's containers may still run: none of their
	// slots runs on a too
	time.Sleep(multiGrace)
	if slot := w.firstTwice(stopped.Add(multiGrace - 500*time.Millisecond)); slot != "" {
		t.Errorf("slot %s ran on both engines within b's grace after its manager stopped", slot)
	}

	n.b.exec(t, n.argsB([]string{"--etcd-servers", n.b.etcdURL, "--leader-elect-lease-duration", multiLease, "--node-grace", multiGrace.String()}))
	n.waitSpread(t, id, 3, 0)
}
