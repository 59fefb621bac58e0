package roles

// Several nodes in one process as the daemon runs them (docs/CONTRACT.md,
// Nodes): the real embedded etcd, and a manager of New per fake engine,
// with --leader-elect: each acts for its node, one leads.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
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

// cluster is a registry of several fake nodes, each with a manager of its
// own as the daemon builds it (New): one of them leads.
type cluster struct {
	store *registry.Store
	grace time.Duration
	nodes map[string]*testNode
}

// testNode is one node: its engine, its labels, and its managers.
type testNode struct {
	name     string
	fake     *taskcontrol.Fake
	labels   map[string]string
	managers []*testManager
}

// testManager is one manager of a node, running until stop.
type testManager struct {
	roles *Roles
	stop  func()
}

func newCluster(t *testing.T, grace time.Duration, labels map[string]map[string]string) *cluster {
	t.Helper()
	c := &cluster{store: newStore(t, testClient(t), "test"), grace: grace, nodes: map[string]*testNode{}}
	for name, l := range labels {
		c.nodes[name] = &testNode{name: name, fake: &taskcontrol.Fake{}, labels: l}
		c.startManager(t, name)
	}
	c.waitRegistered(t)
	return c
}

// waitRegistered waits until the leader knows every node as registered:
// the managers register on their own, and a controller applied before
// one of them has its slots placed on the others.
func (c *cluster) waitRegistered(t *testing.T) {
	t.Helper()
	testpoll.Eventually(t, waitTimeout, func() error {
		alive := map[string]bool{}
		for _, st := range c.leader(t).NodeStats() {
			alive[st.Name] = st.Alive
		}
		for name := range c.nodes {
			if !alive[name] {
				return fmt.Errorf("the leader knows the nodes as %v; want every one of %v registered", alive, slices.Collect(maps.Keys(c.nodes)))
			}
		}
		return nil
	})
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

// startManager runs one more manager for node name, on its engine: the
// node's first acts for it, a second stands by in the node's election.
// Each campaigns in the leader's election.
func (c *cluster) startManager(t *testing.T, name string) *testManager {
	t.Helper()
	n := c.nodes[name]
	identity := fmt.Sprintf("rm-%s-%d", name, len(n.managers)+1)
	r := New(Options{
		Client: c.store.Client(), Store: c.store, Logger: testLogger(t).With("manager", identity), TaskControl: n.fake,
		Node:     api.Node{Name: name, Labels: n.labels, EngineID: "engine-" + name},
		Identity: identity, LeaseDuration: 60 * time.Second, LeaderElect: true,
		SyncPeriod: time.Hour, NodeGrace: c.grace, Policy: clusterPolicy,
	})
	m := &testManager{roles: r, stop: runInBackground(t, r.Run)}
	n.managers = append(n.managers, m)
	return m
}

// stop stops the managers of node name, as SIGTERM does: each resigns and
// revokes its sessions, which takes the node's registration and reports
// with them; its containers stay.
func (c *cluster) stop(name string) {
	for _, m := range c.nodes[name].managers {
		m.stop()
	}
}

// leader is the leader of the term in progress.
func (c *cluster) leader(t *testing.T) *leader.ReplicationManager {
	t.Helper()
	var l *leader.ReplicationManager
	testpoll.Until(t, waitTimeout, "a manager to lead", func() bool {
		for _, n := range c.nodes {
			for _, m := range n.managers {
				if l = m.roles.Leader(); l != nil {
					return true
				}
			}
		}
		return false
	})
	return l
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
		if got := c.leader(t).NodeStats(); !slices.Equal(got, want) {
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

	c.stop("b")
	testpoll.Eventually(t, waitTimeout, func() error {
		if got := c.running("web"); got["a"] != 4 {
			return fmt.Errorf("running %v, want b's two slots moved to a", got)
		}
		return nil
	})
	// b comes back: its slots are a's now, so it removes its containers
	c.startManager(t, "b")
	c.waitRunning(t, "web", map[string]int{"a": 4})
}

func TestLeaderWritesCompareWhatTheyReplaceAndTheElection(t *testing.T) {
	store := newStore(t, testClient(t), "test")
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
	// a second manager of a stands by; the first stops, as on SIGTERM,
	// and the second takes over both roles
	second := c.startManager(t, "a")
	c.nodes["a"].managers[0].stop()
	testpoll.Until(t, waitTimeout, "the second manager to lead", second.roles.Leads)
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

// A cluster of two fake engines and a leader: the tasks of a controller
// that asks are replaced once unhealthy, never more than one slot down at
// once, with Unhealthy in the status and an event each; a controller that
// does not ask keeps its unhealthy tasks.
func TestClusterReplacesUnhealthyTasksOneSlotAtATime(t *testing.T) {
	c := newCluster(t, time.Minute, zones("a", "b"))
	sickly := func(id string, replicas int, onUnhealthy string) *api.ReplicationController {
		rc := newController(id, replicas)
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{
			Test: api.Command{"/task", "healthcheck"}, OnUnhealthy: onUnhealthy}
		return rc
	}
	c.apply(t, sickly("web", 3, api.OnUnhealthyReplace))
	c.apply(t, sickly("db", 1, ""))

	tasksOf := func(id string) map[string]api.Task { // by name, the live ones
		out := map[string]api.Task{}
		for _, n := range c.nodes {
			for _, task := range n.fake.Tasks() {
				if task.Labels[api.LabelController] == id && task.Active() {
					out[task.Name] = task
				}
			}
		}
		return out
	}
	setHealth := func(id, health string) {
		for _, n := range c.nodes {
			for _, task := range n.fake.Tasks() {
				if task.Labels[api.LabelController] == id {
					n.fake.SetHealth(task.ID, health)
				}
			}
		}
	}
	testpoll.Eventually(t, waitTimeout, func() error {
		if web, db := len(tasksOf("web")), len(tasksOf("db")); web != 3 || db != 1 {
			return fmt.Errorf("web runs %d, db %d; want 3 and 1", web, db)
		}
		return nil
	})
	setHealth("web", api.HealthHealthy)
	setHealth("db", api.HealthHealthy)
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.ReadyReplicas != 3 {
			return fmt.Errorf("%d ready, want 3", st.ReadyReplicas)
		}
		return nil
	})
	first := tasksOf("web")
	kept := tasksOf("db")

	// sampled: how many slots at once have no live task (the fakes stop
	// and start at once, so this catches only a gross excess: the bound
	// itself is the property tests'), and whether the status said Unhealthy
	var mu sync.Mutex
	worst, sawUnhealthy := 0, false
	stop := runInBackground(t, func(ctx context.Context) error {
		for ctx.Err() == nil {
			down := 3 - len(tasksOf("web"))
			st, err := c.store.GetStatus(ctx, "web")
			mu.Lock()
			worst = max(worst, down)
			if err == nil && st.FindCondition(api.ConditionUnhealthy) != nil {
				sawUnhealthy = true
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	setHealth("web", api.HealthUnhealthy)
	setHealth("db", api.HealthUnhealthy)
	testpoll.Eventually(t, waitTimeout, func() error {
		now := tasksOf("web")
		for name, task := range first {
			if got, ok := now[name]; !ok || got.ID == task.ID {
				return fmt.Errorf("%s not replaced yet", name)
			}
		}
		return nil
	})
	stop()
	if worst > 1 {
		t.Errorf("%d slots at once without a live task, want at most 1", worst)
	}
	if !sawUnhealthy {
		t.Error("the status never said Unhealthy")
	}
	c.waitStatus(t, "web", func(st *api.ReplicationControllerStatus) error {
		if cond := st.FindCondition(api.ConditionUnhealthy); cond != nil {
			return fmt.Errorf("Unhealthy %+v after every slot was replaced, want none", cond)
		}
		return nil
	})
	testpoll.Eventually(t, waitTimeout, func() error {
		events, err := c.store.ListEvents(t.Context(), "web")
		if err != nil {
			return err
		}
		n := 0
		for _, ev := range events {
			if ev.Reason == api.ReasonUnhealthyReplaced {
				n++
			}
		}
		if n != 3 {
			return fmt.Errorf("%d %s events, want 3", n, api.ReasonUnhealthyReplaced)
		}
		return nil
	})
	for name, task := range tasksOf("db") {
		if task.ID != kept[name].ID {
			t.Errorf("%s of a controller without onUnhealthy was replaced", name)
		}
	}
}
