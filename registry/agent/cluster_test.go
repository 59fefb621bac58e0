package agent

// Several nodes in one process: the real embedded etcd, a Scheduler as the
// leader, and one node manager per fake engine, each under a lease of its
// own, as the daemon runs them (docs/CONTRACT.md, Nodes).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// clusterPolicy allows host ports, for the port check of the scheduler.
var clusterPolicy = api.SecurityPolicy{AllowHostPorts: true}

// cluster is a registry of several fake nodes and a leader.
type cluster struct {
	store *registry.Store
	nodes map[string]*testNode
	sched *leader.ReplicationManager
	// stopSched stops the scheduler, as a leader that loses its term.
	stopSched func()
}

// testNode is one node: its engine, its lease and its manager.
type testNode struct {
	name  string
	fake  *taskcontrol.Fake
	lease clientv3.LeaseID
	stop  func()
}

func newCluster(t *testing.T, grace time.Duration, labels map[string]map[string]string) *cluster {
	t.Helper()
	client := testClient(t)
	store := registry.NewStore(client, fmt.Sprintf("/test/%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), harnesses.Add(1)))
	c := &cluster{store: store, nodes: map[string]*testNode{}}
	for name, l := range labels {
		c.startNode(t, name, l)
	}
	c.sched = leader.NewReplicationManager(store, testLogger(t), leader.Options{NodeGrace: grace, SyncPeriod: time.Hour, Policy: clusterPolicy})
	c.stopSched = runInBackground(t, c.sched.Run)
	return c
}

// runInBackground runs fn until the test ends and checks that it ends
// without an error.
func runInBackground(t *testing.T, fn func(context.Context) error) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// startNode registers a node under a lease of its own and runs its manager.
func (c *cluster) startNode(t *testing.T, name string, labels map[string]string) *testNode {
	t.Helper()
	lease, err := c.store.Client().Grant(t.Context(), 60)
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{name: name, fake: &taskcontrol.Fake{}, lease: lease.ID}
	if old := c.nodes[name]; old != nil {
		n.fake = old.fake // the same engine, a new manager
	}
	if err := c.store.RegisterNode(t.Context(), &api.Node{Name: name, Labels: labels, EngineID: "engine-" + name}, lease.ID); err != nil {
		t.Fatal(err)
	}
	rm := New(c.store, n.fake, testLogger(t).With("node", name), Options{Policy: clusterPolicy, Node: NodeOptions{Name: name, Lease: lease.ID}})
	n.stop = runInBackground(t, rm.Run)
	c.nodes[name] = n
	return n
}

// kill stops a node's manager and revokes its lease, as its lease running
// out after a kill -9 would; its containers stay.
func (c *cluster) kill(t *testing.T, name string) {
	t.Helper()
	n := c.nodes[name]
	n.stop()
	if _, err := c.store.Client().Revoke(t.Context(), n.lease); err != nil {
		t.Fatal(err)
	}
}

// running counts the running containers of id per node.
func (c *cluster) running(id string) map[string]int {
	out := map[string]int{}
	for name, n := range c.nodes {
		for _, task := range n.fake.Tasks() {
			if task.Labels[api.LabelController] == id && task.Active() {
				out[name]++
			}
		}
	}
	return out
}

func (c *cluster) waitRunning(t *testing.T, id string, want map[string]int) {
	t.Helper()
	testpoll.Eventually(t, waitTimeout, func() error {
		got := c.running(id)
		maps.DeleteFunc(got, func(_ string, n int) bool { return n == 0 })
		if !maps.Equal(got, want) {
			return fmt.Errorf("running per node %v, want %v", got, want)
		}
		return nil
	})
}

func (c *cluster) waitStatus(t *testing.T, id string, ok func(*api.ReplicationControllerStatus) error) *api.ReplicationControllerStatus {
	t.Helper()
	var st *api.ReplicationControllerStatus
	testpoll.Eventually(t, waitTimeout, func() error {
		var err error
		st, err = c.store.GetStatus(t.Context(), id)
		if err != nil {
			return err
		}
		return ok(st)
	})
	return st
}

func (c *cluster) apply(t *testing.T, rc *api.ReplicationController) {
	t.Helper()
	spec, err := c.store.GetController(t.Context(), rc.ID)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		_, err = c.store.CreateController(t.Context(), rc)
	case err == nil:
		_, err = c.store.UpdateController(t.Context(), rc, spec.ModRevision)
	}
	if err != nil {
		t.Fatalf("apply %s: %v", rc.ID, err)
	}
}

func zones(names ...string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, n := range names {
		out[n] = map[string]string{"zone": n}
	}
	return out
}

func TestClusterSpreadsScalesAndDeletes(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a", "b"))
	c.apply(t, newController("web", 4))
	c.waitRunning(t, "web", map[string]int{"a": 2, "b": 2})
	testpoll.Eventually(t, waitTimeout, func() error {
		want := []leader.NodeStat{{Name: "a", Alive: true, Assigned: 2, Containers: 2}, {Name: "b", Alive: true, Assigned: 2, Containers: 2}}
		if got := c.sched.NodeStats(); !slices.Equal(got, want) {
			return fmt.Errorf("node stats %+v, want %+v", got, want)
		}
		return nil
	})
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 4 || st.ReadyReplicas != 4 || st.UpdatedReplicas != 4 {
			return fmt.Errorf("status %+v, want 4 replicas ready and updated over both nodes", st)
		}
		if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Reason != api.ReasonRolloutComplete {
			return fmt.Errorf("Progressing %+v, want RolloutComplete", c)
		}
		return nil
	})

	c.apply(t, newController("web", 1))
	testpoll.Eventually(t, waitTimeout, func() error {
		if got := c.running("web"); got["a"]+got["b"] != 1 {
			return fmt.Errorf("running %v, want 1 in all", got)
		}
		return nil
	})

	if err := c.store.DeleteController(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	c.waitRunning(t, "web", map[string]int{})
	testpoll.Eventually(t, waitTimeout, func() error {
		_, err := c.store.GetStatus(t.Context(), "web")
		if !errors.Is(err, registry.ErrNotFound) {
			return fmt.Errorf("status after the delete: %w, want none", err)
		}
		assigned, err := c.store.ListAssignments(t.Context())
		if err != nil || len(assigned["web"]) != 0 {
			return fmt.Errorf("assignments after the delete: %v (%w), want none", assigned["web"], err)
		}
		return nil
	})
}

func TestClusterNodeSelector(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a", "b"))
	rc := newController("web", 3)
	rc.DesiredState.NodeSelector = map[string]string{"zone": "b"}
	c.apply(t, rc)
	c.waitRunning(t, "web", map[string]int{"b": 3})

	rc.DesiredState.NodeSelector = map[string]string{"zone": "a"}
	c.apply(t, rc)
	c.waitRunning(t, "web", map[string]int{"a": 3})
}

func TestClusterHostPortOverTwoNodes(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a", "b"))
	rc := newController("web", 3)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports = []api.Port{{ContainerPort: 8080, HostPort: 18080}}
	c.apply(t, rc)
	c.waitRunning(t, "web", map[string]int{"a": 1, "b": 1})
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		f := st.FindCondition(api.ConditionReplicaFailure)
		if st.Replicas != 2 || f == nil || f.Reason != api.ReasonUnschedulable || !strings.Contains(f.Message, "18080/TCP") {
			return fmt.Errorf("status %+v, want 2 replicas and the third Unschedulable, naming the port", st)
		}
		return nil
	})
}

func TestClusterMovesTheSlotsOfADeadNode(t *testing.T) {
	c := newCluster(t, 500*time.Millisecond, zones("a", "b"))
	c.apply(t, newController("web", 4))
	c.waitRunning(t, "web", map[string]int{"a": 2, "b": 2})

	c.kill(t, "b")
	testpoll.Eventually(t, waitTimeout, func() error {
		if got := c.running("web"); got["a"] != 4 {
			return fmt.Errorf("running %v, want b's two slots moved to a", got)
		}
		return nil
	})
	// b comes back: its slots are a's now, so it removes its containers
	c.startNode(t, "b", map[string]string{"zone": "b"})
	c.waitRunning(t, "web", map[string]int{"a": 4})
}

func TestLeaderWritesCompareWhatTheyReplaceAndTheElection(t *testing.T) {
	store := registry.NewStore(testClient(t), fmt.Sprintf("/test/%s-%d", t.Name(), harnesses.Add(1)))
	on := func(node string) *api.Assignment { return &api.Assignment{Node: node, Revision: 1, TemplateHash: "h"} }
	rev, err := store.CommitLeader(t.Context(), nil, registry.LeaderWrite{ID: "web", Changes: []registry.AssignChange{{ID: "web", Slot: 1, Next: on("a")}}})
	if err != nil || rev == 0 {
		t.Fatalf("first write: %d, %v", rev, err)
	}

	// another leader moved the slot meanwhile: a write that read rev loses
	if _, err := store.CommitLeader(t.Context(), nil, registry.LeaderWrite{ID: "web", Changes: []registry.AssignChange{{ID: "web", Slot: 1, OldRev: rev, Next: on("b")}}}); err != nil {
		t.Fatal(err)
	}
	_, err = store.CommitLeader(t.Context(), nil, registry.LeaderWrite{ID: "web", Changes: []registry.AssignChange{{ID: "web", Slot: 1, OldRev: rev, Next: on("c")}}})
	if !errors.Is(err, registry.ErrAssignmentConflict) {
		t.Errorf("a write from a stale read: got %v, want ErrAssignmentConflict", err)
	}
	// a create of a key that exists loses too
	_, err = store.CommitLeader(t.Context(), nil, registry.LeaderWrite{ID: "web", Changes: []registry.AssignChange{{ID: "web", Slot: 1, Next: on("c")}}})
	if !errors.Is(err, registry.ErrAssignmentConflict) {
		t.Errorf("a create over an existing assignment: got %v, want ErrAssignmentConflict", err)
	}
	// a leader whose guard fails (its election key is gone) writes nothing,
	// a status neither, and learns that its term is over
	guard := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(store.LeaderElectionKey()+"/gone"), ">", 0)}
	st := &api.ReplicationControllerStatus{ID: "web", Replicas: 1}
	_, err = store.CommitLeader(t.Context(), guard, registry.LeaderWrite{ID: "web", Status: st, Changes: []registry.AssignChange{{ID: "web", Slot: 2, Next: on("a")}}})
	if !errors.Is(err, registry.ErrNotLeader) {
		t.Errorf("a write of a leader that lost: got %v, want ErrNotLeader", err)
	}
	if _, err := store.GetStatus(t.Context(), "web"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("status after a refused write: %v, want none", err)
	}
	got, err := store.ListAssignments(t.Context())
	if err != nil || !maps.Equal(got["web"], map[int]api.Assignment{1: *on("b")}) {
		t.Errorf("assignments: got %v (%v), want only slot 1 on b", got["web"], err)
	}
}

func TestClusterRollingUpdateKeepsTheBoundsOverNodes(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a", "b"))
	rc := newController("web", 4)
	rc.DesiredState.MinReadySeconds = 1
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MonitorSeconds: new(1)}
	c.apply(t, rc)
	c.waitRunning(t, "web", map[string]int{"a": 2, "b": 2})
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.AvailableReplicas != 4 {
			return fmt.Errorf("available %d, want 4", st.AvailableReplicas)
		}
		return nil
	})

	// available, as the manager counts it: running, and started at least
	// minReadySeconds ago; the default bounds allow one fewer than replicas
	availableNow := func() (available, live int) {
		now := time.Now()
		for _, n := range c.nodes {
			for _, task := range n.fake.Tasks() {
				if task.Labels[api.LabelController] != "web" || !task.Active() {
					continue
				}
				live++
				if now.Sub(task.StartedAt) >= time.Second {
					available++
				}
			}
		}
		return available, live
	}
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "v2"}}
	newHash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	c.apply(t, rc)
	minAvailable, maxLive := 4, 0
	testpoll.Eventually(t, waitTimeout, func() error {
		available, live := availableNow()
		minAvailable, maxLive = min(minAvailable, available), max(maxLive, live)
		updated := 0
		for _, n := range c.nodes {
			for _, task := range n.fake.Tasks() {
				if task.Labels[api.LabelController] == "web" && task.Active() && task.Labels[api.LabelTemplateHash] == newHash {
					updated++
				}
			}
		}
		if updated != 4 || live != 4 {
			return fmt.Errorf("%d of 4 updated, %d live", updated, live)
		}
		return nil
	})
	if minAvailable < 3 || maxLive > 4 {
		t.Errorf("during the rollout over two nodes: at least %d available and at most %d live; want at least 3 and at most 4", minAvailable, maxLive)
	}
	t.Logf("rollout over two nodes: at least %d available, at most %d live", minAvailable, maxLive)
}

func TestClusterANewLeaderCarriesTheStatusOn(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a"))
	c.apply(t, newController("web", 2))
	before := c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.ReadyReplicas != 2 {
			return fmt.Errorf("ready %d, want 2", st.ReadyReplicas)
		}
		return nil
	})
	c.stopSched()
	next := leader.NewReplicationManager(c.store, testLogger(t), leader.Options{NodeGrace: time.Minute, SyncPeriod: time.Hour})
	runInBackground(t, next.Run)
	c.apply(t, newController("web", 3)) // a change for the new leader to write
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.ReadyReplicas != 3 {
			return fmt.Errorf("ready %d, want 3", st.ReadyReplicas)
		}
		if !st.CreationTimestamp.Equal(before.CreationTimestamp) {
			return fmt.Errorf("creationTimestamp %s, want the first leader's %s", st.CreationTimestamp, before.CreationTimestamp)
		}
		return nil
	})
}

func TestClusterWritesEveryStatusOfManyControllers(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a"))
	const n = 1050
	for i := range n {
		c.apply(t, newController(fmt.Sprintf("c%04d", i), 0))
	}
	testpoll.Eventually(t, waitTimeout, func() error {
		statuses, err := c.store.ListStatuses(t.Context())
		if err != nil {
			return err
		}
		if len(statuses) != n {
			return fmt.Errorf("%d statuses, want %d", len(statuses), n)
		}
		return nil
	})
}

// Issue 26, item 6: an invalid spec released its host ports to other
// controllers while its containers ran on, so a second controller with
// the same hostPort was placed onto the same node.
func TestClusterAnInvalidSpecKeepsItsHostPorts(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a"))
	withPort := func(id string) *api.ReplicationController {
		rc := newController(id, 1)
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports = []api.Port{{ContainerPort: 8080, HostPort: 18080}}
		return rc
	}
	c.apply(t, withPort("web"))
	c.waitRunning(t, "web", map[string]int{"a": 1})

	// a bad edit: web's container runs on, and keeps its port
	if _, err := testClient(t).Put(t.Context(), c.store.ControllerKey("web"), `{"id":"web","desiredState":{"replicas":-1}}`); err != nil {
		t.Fatal(err)
	}
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.FindCondition(api.ConditionInvalidSpec) == nil {
			return fmt.Errorf("status %+v, want InvalidSpec", st)
		}
		return nil
	})
	c.apply(t, withPort("api"))
	c.waitStatus(t, "api", func(st *api.ReplicationControllerStatus) error {
		f := st.FindCondition(api.ConditionReplicaFailure)
		if f == nil || f.Reason != api.ReasonUnschedulable || !strings.Contains(f.Message, "18080/TCP") {
			return fmt.Errorf("status %+v, want api Unschedulable for the port web's container holds", st)
		}
		return nil
	})
	if got := c.running("web"); got["a"] != 1 {
		t.Errorf("web running %v, want its container left alone on a", got)
	}
}
