package agent_test

// A property test of the bounds on the in-process cluster as it ships: the
// real embedded etcd, the leader's loop running on a clock the test moves,
// and a node manager per fake engine, each built as the daemon builds them
// (registry/roles), the nodes stepped by hand in a random order,
// so that the leader decides from reports that are as stale as the
// history makes them. After every step the leader catches up with etcd
// (CaughtUp), so that a history is the same each time it runs.
// Random histories of spec writes, scales, template and selector changes,
// containers killed, nodes dying and coming back, nodes cordoned, drained
// and relabelled (their /registry/nodeconfig key), and leaders replaced;
// after every step no slot runs on two engines, the live containers
// never grow above replicas + maxSurge, no slot is newly placed on a
// paused or drained node, and once replicas - max(1, maxUnavailable)
// slots ran and the leader saw them in the nodes' reports, as many run on
// unless the history killed one; at the end, with every fault healed, the
// controller converges, and a drain that another node can take over
// leaves its node empty. (The pure decision has a finer model with slow
// stops and late node views in package decide.)

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"pgregory.net/rapid"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/testclock"
	"github.com/replication-manager/replication-manager/internal/testlog"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// clusterPolicy allows host ports, for the port check of the scheduler.
var clusterPolicy = api.SecurityPolicy{AllowHostPorts: true}

// propCluster is the cluster one history runs on.
type propCluster struct {
	t     *rapid.T
	tb    *testing.T
	ctx   context.Context
	store *registry.Store
	clock *testclock.Clock
	// sched is the leader of the manager that leads (runLeader).
	sched *leader.ReplicationManager
	// stopLeader stops the running leader and returns its Run's error.
	stopLeader func() error
	nodes      map[string]*propNode
	spec       *api.ReplicationController
	rev        int64
	// grown is the live count that may not be exceeded by a create.
	grown int
	// runArmed: the floor of slots (runFloor) has run since the last kill,
	// and the leader saw them run; unseen are the nodes whose containers
	// the history killed since they last reported.
	runArmed bool
	unseen   map[string]bool
	// floorWritten is the floor of the spec last written.
	floorWritten int
	// config is each node's maintenance config as the history last wrote
	// it; closedOn holds, for each paused or drained node, the slots
	// assigned to it when it was closed that it has kept ever since: no
	// other slot may be placed there.
	config   map[string]api.NodeConfig
	closedOn map[string]map[int]bool
}

type propNode struct {
	name string
	fake *taskcontrol.Fake
	// roles are the node's manager's (roles.New); rm is the node's
	// manager of the lease in use, which the test steps.
	roles *roles.Roles
	rm    *agent.Agent
	lease clientv3.LeaseID
	alive bool
}

func newPropCluster(t *testing.T, rt *rapid.T, store *registry.Store) *propCluster {
	t.Helper()
	c := &propCluster{t: rt, tb: t, ctx: t.Context(), store: store, clock: testclock.New(time.Now()), nodes: map[string]*propNode{}, unseen: map[string]bool{},
		config: map[string]api.NodeConfig{}, closedOn: map[string]map[int]bool{}}
	for _, name := range []string{"a", "b"} {
		n := &propNode{name: name, fake: &taskcontrol.Fake{Now: c.clock.Now}}
		n.roles = roles.New(roles.Options{
			Client: store.Client(), Store: store, Logger: testlog.Logger(), TaskControl: n.fake,
			Node: api.Node{Name: name, Labels: map[string]string{"zone": name}}, Identity: "rm-" + name,
			Policy: clusterPolicy, Clock: c.clock,
		})
		c.nodes[name] = n
		c.start(n)
	}
	c.newLeader()
	c.spec = demospec.Controller("web", "demo-task:latest", 3, map[string]string{"tier": "demo"})
	c.write()
	return c
}

// start registers node n under a new lease and gives it a new manager.
func (c *propCluster) start(n *propNode) {
	lease, err := c.store.Client().Grant(c.ctx, 60)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.store.RegisterNode(c.ctx, &api.Node{Name: n.name, Labels: map[string]string{"zone": n.name}}, lease.ID); err != nil {
		c.t.Fatal(err)
	}
	n.lease, n.alive = lease.ID, true
	n.rm = n.roles.NodeManager(lease.ID)
	n.rm.SetRegistryID(agent.TestRegistryID)
	n.rm.MarkSpecsListed()
}

// newLeader replaces the leader: the new one knows only what etcd holds.
// It runs until the history ends.
func (c *propCluster) newLeader() {
	c.stop()
	c.sched, c.stopLeader = runLeader(c.tb, roles.Options{
		Client: c.store.Client(), Store: c.store, Logger: testlog.Logger(), Identity: "leader",
		NodeGrace: 30 * time.Second, Policy: clusterPolicy, Clock: c.clock,
	})
	c.caughtUp()
}

// stop stops the running leader, which must end without an error (runLeader).
func (c *propCluster) stop() {
	if c.stopLeader == nil {
		return
	}
	if err := c.stopLeader(); err != nil {
		c.t.Fatalf("the leader's Run: %v", err)
	}
}

// caughtUp waits until the leader has acted on everything etcd holds.
func (c *propCluster) caughtUp() {
	ctx, cancel := context.WithTimeout(c.ctx, waitTimeout)
	defer cancel()
	if err := c.sched.CaughtUp(ctx); err != nil {
		c.t.Fatalf("the leader did not catch up: %v", err)
	}
}

// write stores the spec as a user would.
func (c *propCluster) write() {
	floor := c.runFloor()
	if floor > c.floorWritten {
		c.runArmed = false // more must run: it has to get there first
	}
	c.floorWritten = floor
	spec, err := c.store.GetController(c.ctx, "web")
	if err == nil {
		c.rev, err = c.store.UpdateController(c.ctx, c.spec, spec.ModRevision)
	} else {
		c.rev, err = c.store.CreateController(c.ctx, c.spec)
	}
	if err != nil {
		c.t.Fatal(err)
	}
	c.caughtUp()
	c.grown = max(c.bound(), min(c.grown, c.committed()))
}

// configure changes node's maintenance config as rcctl cordon, drain and
// label node do, and waits until the leader acted on it.
func (c *propCluster) configure(node string, change func(*api.NodeConfig)) {
	wasOpen := c.config[node].Effective() == api.NodeActive
	cfg, err := c.store.UpdateNodeConfig(c.ctx, node, func(cfg *api.NodeConfig) error {
		change(cfg)
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.config[node] = cfg
	switch open := cfg.Effective() == api.NodeActive; {
	case open:
		delete(c.closedOn, node)
	case wasOpen:
		c.closedOn[node] = map[int]bool{}
		for slot, a := range c.assignments() {
			if a.Node == node {
				c.closedOn[node][slot] = true
			}
		}
	}
	c.caughtUp()
}

// assignments are the controller's slot assignments in etcd.
func (c *propCluster) assignments() map[int]api.Assignment {
	assigned, err := c.store.ListAssignments(c.ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	return assigned["web"]
}

// zone is node's zone label: its config's over its own (its name).
func (c *propCluster) zone(node string) string {
	if zone, ok := c.config[node].Labels["zone"]; ok {
		return zone
	}
	return node
}

// committed is live plus the creates nodes are bound to make: assigned
// slots whose node runs no container of them yet. A spec takes effect
// when the leader decides on it, not when it is written.
func (c *propCluster) committed() int {
	n := c.live()
	for slot, a := range c.assignments() {
		nd := c.nodes[a.Node]
		if nd == nil {
			continue
		}
		i := slices.IndexFunc(nd.fake.Tasks(), func(t api.Task) bool { return t.Name == api.TaskName("web", slot) && t.Active() })
		if i < 0 || a.StartFirst && nd.fake.Tasks()[i].Labels[api.LabelTemplateHash] != a.TemplateHash {
			n++ // to create, or a successor to start first
		}
	}
	return n
}

func (c *propCluster) bound() int {
	surge, _ := c.spec.DesiredState.Strategy().Bounds(c.spec.DesiredState.Replicas)
	return c.spec.DesiredState.Replicas + surge
}

// lead has the leader decide again, as its periodic pass does.
func (c *propCluster) lead() {
	c.sched.Synchronize()
	c.caughtUp()
}

// act is one sync of node n, from what etcd holds now.
func (c *propCluster) act(n *propNode) {
	if !n.alive {
		return
	}
	spec, err := c.store.GetController(c.ctx, "web")
	if err != nil {
		c.t.Fatal(err)
	}
	n.rm.PutSpec(spec)
	if _, err := c.store.MirrorList(c.ctx, c.store.AssignmentsPrefix(), n.rm.Slots()); err != nil {
		c.t.Fatal(err)
	}
	if err := n.rm.RelistTasks(c.ctx); err != nil {
		c.t.Fatal(err)
	}
	before := c.live()
	_ = n.rm.SyncSlots(c.ctx, "web") // failures are retried; the invariants are what matter
	delete(c.unseen, n.name)         // its report holds what its engine lists
	if live := c.live(); live > before && live > c.grown {
		c.t.Fatalf("node %s created up to %d live, above the bound %d (replicas + maxSurge %d)", n.name, live, c.grown, c.bound())
	}
	c.caughtUp() // the leader acts on the node's reports
}

// live counts the controller's active containers on every engine.
func (c *propCluster) live() int {
	n := 0
	for _, nd := range c.nodes {
		for _, task := range nd.fake.Tasks() {
			if task.Active() || task.State == api.StateCreated {
				n++
			}
		}
	}
	return n
}

// check asserts that no slot is live on two engines.
func (c *propCluster) check() {
	on := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		for _, task := range c.nodes[name].fake.Tasks() {
			if !task.Active() {
				continue
			}
			slot := task.Labels[api.LabelSlot]
			if other, ok := on[slot]; ok && other != name {
				c.t.Fatalf("slot %s live on nodes %s and %s", slot, other, name)
			}
			on[slot] = name
		}
	}
	c.grown = max(c.bound(), min(c.grown, c.committed()))
	c.checkClosed()
	c.checkRunning()
}

// checkClosed asserts that no slot is newly placed on a paused or drained
// node: each slot assigned to one was there when it closed, and has been
// ever since.
func (c *propCluster) checkClosed() {
	assigned := c.assignments()
	for node, kept := range c.closedOn {
		for slot := range kept {
			if a, ok := assigned[slot]; !ok || a.Node != node {
				delete(kept, slot) // it left: coming back would be a new placement
			}
		}
	}
	for slot, a := range assigned {
		if kept, closed := c.closedOn[a.Node]; closed && !kept[slot] {
			c.t.Fatalf("slot %d newly placed on node %s, which is %s; %s", slot, a.Node, c.config[a.Node].Effective(), c)
		}
	}
}

// runFloor is how many slots run whatever the leader does: a move or a
// replacement stops first, and takes one down even with maxUnavailable 0.
func (c *propCluster) runFloor() int {
	replicas := c.spec.DesiredState.Replicas
	_, unavailable := c.spec.DesiredState.Strategy().Bounds(replicas)
	return replicas - max(1, unavailable)
}

// checkRunning asserts that once the floor of slots ran, and the leader
// saw them run in the nodes' reports, as many run on unless the history
// killed one.
func (c *propCluster) checkRunning() {
	floor, runs := c.runFloor(), len(c.runningSlots())
	switch {
	case c.runArmed && runs < floor:
		c.t.Fatalf("%d slots running, below replicas %d - max(1, maxUnavailable): %d; %s", runs, c.spec.DesiredState.Replicas, floor, c)
	case !c.runArmed && len(c.unseen) == 0 && runs >= floor && c.reportedRunning() >= floor:
		c.runArmed = true
	}
}

// runningSlots are the slots a container of which runs on an engine.
func (c *propCluster) runningSlots() map[string]bool {
	slots := map[string]bool{}
	for _, nd := range c.nodes {
		for _, task := range nd.fake.Tasks() {
			if task.Active() {
				slots[task.Labels[api.LabelSlot]] = true
			}
		}
	}
	return slots
}

// reportedRunning counts the slots the leader keeps (a scale-down it
// ordered is not undone by a later scale-up: the new replicas get new
// slots) that the nodes' reports in etcd, which the leader has caught up
// with, show running.
func (c *propCluster) reportedRunning() int {
	reports, err := c.store.ListReports(c.ctx, "web")
	if err != nil {
		c.t.Fatal(err)
	}
	assigned := c.assignments()
	slots := map[int]bool{}
	for _, r := range reports {
		for _, task := range r.Tasks {
			if _, kept := assigned[task.Slot]; kept && task.State == api.StateRunning {
				slots[task.Slot] = true
			}
		}
	}
	return len(slots)
}

// String describes the cluster for a failed check: each engine's
// containers and each slot's assignment.
func (c *propCluster) String() string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		n := c.nodes[name]
		fmt.Fprintf(&b, "\nnode %s (alive %v, %s, zone %s):", name, n.alive, c.config[name].Effective(), c.zone(name))
		for _, task := range n.fake.Tasks() {
			fmt.Fprintf(&b, " [%s slot %s %s %s]", task.Name, task.Labels[api.LabelSlot], task.Labels[api.LabelTemplateHash], task.State)
		}
	}
	assigned := c.assignments()
	for _, slot := range slices.Sorted(maps.Keys(assigned)) {
		fmt.Fprintf(&b, "\nslot %d: %+v", slot, assigned[slot])
	}
	return b.String()
}

// killed notes that the history stopped a container of node n.
func (c *propCluster) killed(n *propNode) {
	c.runArmed = false
	c.unseen[n.name] = true
}

func (c *propCluster) pick(t *rapid.T) *propNode {
	return c.nodes[rapid.SampledFrom([]string{"a", "b"}).Draw(t, "node")]
}

func TestClusterKeepsTheBoundsOverRandomHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("random histories on the embedded etcd")
	}
	histories := 0
	rapid.Check(t, func(rt *rapid.T) {
		histories++
		c := newPropCluster(t, rt, newStore(t))
		defer func() { _ = c.stopLeader() }() // also when the history fails
		rt.Repeat(map[string]func(*rapid.T){
			"scale": func(t *rapid.T) {
				c.spec.DesiredState.Replicas = rapid.IntRange(0, 5).Draw(t, "replicas")
				c.write()
			},
			"template": func(t *rapid.T) {
				c.spec.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "V", Value: fmt.Sprint(c.rev)}}
				c.write()
			},
			"bounds": func(t *rapid.T) {
				surge := intstr.FromInt(rapid.IntRange(0, 2).Draw(t, "surge"))
				unavailable := intstr.FromInt(rapid.IntRange(1, 2).Draw(t, "unavailable"))
				c.spec.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &surge, MaxUnavailable: &unavailable}
				c.write()
			},
			"selector": func(t *rapid.T) {
				c.spec.DesiredState.NodeSelector = map[string]string{"zone": rapid.SampledFrom([]string{"a", "b"}).Draw(t, "zone")}
				if rapid.Bool().Draw(t, "any") {
					c.spec.DesiredState.NodeSelector = nil
				}
				c.write()
			},
			"lead": func(*rapid.T) { c.lead() },
			"act":  func(t *rapid.T) { c.act(c.pick(t)) },
			"tick": func(t *rapid.T) {
				c.clock.Advance(time.Duration(rapid.IntRange(1, 10).Draw(t, "seconds")) * time.Second)
				c.caughtUp() // the rechecks the leader put off until now
			},
			"kill container": func(t *rapid.T) {
				n := c.pick(t)
				if tasks := n.fake.Tasks(); len(tasks) > 0 {
					task := rapid.SampledFrom(tasks).Draw(t, "container")
					if err := n.fake.DeleteTask(c.ctx, task.ID); err != nil {
						t.Fatal(err)
					}
					c.killed(n)
				}
			},
			"kill node": func(t *rapid.T) {
				n := c.pick(t)
				if !n.alive {
					return
				}
				// the machine dies: its containers and its lease go
				for _, task := range n.fake.Tasks() {
					if err := n.fake.DeleteTask(c.ctx, task.ID); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := c.store.Client().Revoke(c.ctx, n.lease); err != nil {
					t.Fatal(err)
				}
				n.alive = false
				c.runArmed = false // its reports went with its lease
				c.caughtUp()
			},
			"return node": func(t *rapid.T) {
				if n := c.pick(t); !n.alive {
					c.start(n)
					c.caughtUp()
				}
			},
			"availability": func(t *rapid.T) {
				avail := rapid.SampledFrom([]api.NodeAvailability{api.NodeActive, api.NodePause, api.NodeDrain}).Draw(t, "availability")
				c.configure(c.pick(t).name, func(cfg *api.NodeConfig) { cfg.Availability = avail })
			},
			"relabel": func(t *rapid.T) {
				zone := rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "zone label")
				c.configure(c.pick(t).name, func(cfg *api.NodeConfig) {
					cfg.Labels = nil
					if zone != "" {
						cfg.Labels = map[string]string{"zone": zone}
					}
				})
			},
			"new leader": func(*rapid.T) { c.newLeader() },
			"":           func(*rapid.T) { c.check() },
		})
		c.converge()
		c.stop()
	})
	t.Logf("%d histories", histories)
}

// converge heals every fault and steps the cluster until it settles. A
// node's config is a fault too, but for a drain the other node can take
// over: that one stays, and its node must end empty.
func (c *propCluster) converge() {
	for _, n := range c.nodes {
		if !n.alive {
			c.start(n)
		}
	}
	drained := c.drainToKeep()
	for name := range c.nodes {
		if name != drained {
			c.configure(name, func(cfg *api.NodeConfig) { *cfg = api.NodeConfig{} })
		}
	}
	c.lead()
	for range 30 {
		for _, name := range []string{"a", "b"} {
			c.act(c.nodes[name])
		}
		c.clock.Advance(6 * time.Second)
		c.lead()
		c.check()
	}
	want := c.spec.DesiredState.Replicas
	hash := api.TemplateHash(&c.spec.DesiredState.TaskTemplate)
	got := 0
	for name, n := range c.nodes {
		for _, task := range n.fake.Tasks() {
			if !task.Active() {
				continue
			}
			got++
			if task.Labels[api.LabelTemplateHash] != hash {
				c.t.Fatalf("%s on %s runs template %s after the history, want %s", task.Name, name, task.Labels[api.LabelTemplateHash], hash)
			}
			if sel := c.spec.DesiredState.NodeSelector; sel != nil && sel["zone"] != c.zone(name) {
				c.t.Fatalf("%s on %s, which does not match %v", task.Name, name, sel)
			}
			if name == drained {
				c.t.Fatalf("%s still on %s, drained, after the history; %s", task.Name, name, c)
			}
		}
	}
	if got != want {
		c.t.Fatalf("%d live after the history, want %d", got, want)
	}
}

// drainToKeep is a node the history left drained whose slots the other
// node can take, once healed, under the spec's selector; "" if none.
func (c *propCluster) drainToKeep() string {
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		other := map[string]string{"a": "b", "b": "a"}[name]
		sel := c.spec.DesiredState.NodeSelector
		if c.config[name].Effective() == api.NodeDrain && (sel == nil || sel["zone"] == other) {
			return name
		}
	}
	return ""
}
