package decide

// Property tests of the bounds over random histories, on a small model of
// the registry: the leader is Decide, as the registry's leader runs it;
// each node runs what it last saw assigned to it, slowly, and reports
// late; containers start, become ready, die, take time to stop; nodes die
// and come back. After
// every step: no slot is live on two nodes, nothing is created above
// replicas + maxSurge, and once the controller has been available (as its
// status says: from the reports) it stays at replicas - maxUnavailable or
// more unless the history itself killed something, and as many slots as
// replicas - max(1, maxUnavailable) run once they ran (a container that
// is not ready, or stops slowly, still runs). Templates may crash,
// and a controller may roll a failed rollout back (rollback.go): the
// rollback keeps the same bounds. At the end, with every fault healed,
// everything converges: on the spec's template, or on the one a rollback
// restored.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/nodemodel"
)

// simContainer is one container on a node.
type simContainer struct {
	slot     int
	named    bool
	hash     string
	ready    bool
	stopping bool
	started  time.Time
	// id is the container's; sick: Docker reports it unhealthy.
	id   string
	sick bool
}

// simNode is one node: its engine, what it last saw assigned and what it
// last reported.
type simNode struct {
	name string
	// zone is its label (its name until a config changes it), and
	// availability its config's.
	zone         string
	availability api.NodeAvailability
	alive        bool
	goneSince    time.Time
	containers   []*simContainer
	applied      map[int]Assignment
	report       *simReport
}

type simReport struct {
	containers []Container
	Report
}

type world struct {
	t     *rapid.T
	now   time.Time
	rev   int64
	nodes []*simNode
	ctl   Controller
	// bad templates exit soon after they start.
	bad      map[string]bool
	assigned map[int]Assignment
	// the leader's: what it took off nodes, and its mirror of the reports
	// (late, as a watch is), as of mirrorRev.
	released  map[int]Release
	mirror    map[string]*simReport
	mirrorRev int64
	// bound is what live may not exceed: replicas + surge, or more while
	// a scale-down is still under way (it never grows then).
	bound int
	// armed: the controller has been available since the last kill;
	// runArmed: as many slots as the floor have run since, and the leader
	// saw them run.
	armed, runArmed bool
	// unseen are the nodes whose containers the history killed since the
	// leader's mirror last caught up with their reports: until it does,
	// the leader counts the dead, and the controller cannot be armed.
	unseen map[string]bool
	// killed are the nodes with a kill their report does not show yet.
	killed map[string]bool
	// moving: slots move off nodes that no longer match the selector, and
	// the controller is not back at replicas - maxUnavailable since.
	moving bool
	// health is the leader's record of ill health (health.go), and ids
	// numbers the containers.
	health map[int]Health
	ids    int
	// rollout is the leader's record of the rollouts (kept in the status:
	// a new leader has it), watched its memory of new containers
	// (rollback.go).
	rollout api.RolloutRecord
	watched map[string]Watched
	// deadline: a node reports the rollout of the spec's template past its
	// progress deadline.
	deadline bool
}

const simGrace = 30 * time.Second

func newWorld(t *rapid.T) *world {
	w := &world{t: t, now: t0, bad: map[string]bool{}, assigned: map[int]Assignment{}, released: map[int]Release{}, mirror: map[string]*simReport{},
		unseen: map[string]bool{}, killed: map[string]bool{}}
	for _, n := range []string{"a", "b", "c"} {
		w.nodes = append(w.nodes, &simNode{name: n, zone: n, alive: true, applied: map[int]Assignment{}})
	}
	w.ctl = Controller{ID: "web", Replicas: 3, Revision: 1, Hash: "t1", Unavailable: 1, AvailableAfter: 5 * time.Second, ReplaceUnhealthy: true,
		ProgressDeadline: time.Minute, Rollback: rapid.Bool().Draw(t, "rollback")}
	w.bound = w.ctl.Replicas + w.ctl.Surge
	if rapid.Bool().Draw(t, "rolling from t0") {
		// t0 completed before the history: t1 rolls out, and may crash
		w.rollout = api.RolloutRecord{CompletedRevision: 0, CompletedHash: "t0"}
		w.bad["t1"] = rapid.Bool().Draw(t, "t1 crashes")
	}
	return w
}

func (w *world) live() (n int) {
	for _, nd := range w.nodes {
		n += len(nd.containers)
	}
	return n
}

// committed is live plus the creates nodes are bound to make: slots a node
// saw assigned and has no container of yet. An assignment taken back
// reaches a node late; until it does, the node may still act on it.
// The leader's assignments count as well: a spec takes effect when the
// leader decides on it.
func (w *world) committed() int {
	n := 0
	for _, nd := range w.nodes {
		slots := w.slotsOf(nd)
		for slot, a := range w.assigned {
			if a.Node == nd.name {
				slots[slot] = true
			}
		}
		for slot := range slots {
			actual, alone := 0, false
			for _, c := range nd.containers {
				if c.slot == slot {
					actual++
				}
			}
			expected := 0
			// what the node saw and what is assigned now may differ: the
			// node may act on the one, then the other
			for _, a := range []*Assignment{ptr(nd.applied, slot), w.assignedTo(nd.name, slot)} {
				if a == nil {
					continue
				}
				alone = actual == 1 && slices.ContainsFunc(nd.containers, func(c *simContainer) bool { return c.slot == slot && c.named && c.hash == a.Hash })
				e := 1
				if a.StartFirst && !alone {
					e = 2 // the old one and its successor
				}
				expected = max(expected, e)
			}
			n += max(actual, expected)
		}
	}
	return n
}

func ptr(m map[int]Assignment, slot int) *Assignment {
	if a, ok := m[slot]; ok {
		return &a
	}
	return nil
}

// assignedTo is slot's assignment if it names node.
func (w *world) assignedTo(node string, slot int) *Assignment {
	if a, ok := w.assigned[slot]; ok && a.Node == node {
		return &a
	}
	return nil
}

func (w *world) ready() (n int) {
	for _, nd := range w.nodes {
		for _, c := range nd.containers {
			if c.ready && !c.stopping && w.now.Sub(c.started) >= w.ctl.AvailableAfter {
				n++
			}
		}
	}
	return n
}

// changeSpec makes a new spec: replicas, template, bounds or selector.
func (w *world) changeSpec(t *rapid.T) {
	c := w.ctl
	c.Revision = w.rev + 1
	w.rev++
	switch rapid.IntRange(0, 4).Draw(t, "change") {
	case 0:
		c.Replicas = rapid.IntRange(0, 6).Draw(t, "replicas")
	case 1:
		c.Hash = fmt.Sprintf("t%d", w.rev)
		w.bad[c.Hash] = rapid.IntRange(0, 2).Draw(t, "badness") == 0
		w.deadline = false
	case 2:
		c.Surge = rapid.IntRange(0, 2).Draw(t, "surge")
		c.Unavailable = rapid.IntRange(0, 2).Draw(t, "unavailable")
		if c.Surge == 0 && c.Unavailable == 0 {
			c.Unavailable = 1
		}
	case 4:
		// what a failed rollout does
		c.Rollback = rapid.Bool().Draw(t, "rollback")
		c.MaxFailureRatio = rapid.SampledFrom([]float64{0, 0.34, 1}).Draw(t, "maxFailureRatio")
		c.ProgressDeadline = rapid.SampledFrom([]time.Duration{20 * time.Second, time.Minute, 10 * time.Minute}).Draw(t, "progressDeadline")
	case 3:
		switch rapid.IntRange(0, 2).Draw(t, "selector") {
		case 0:
			c.Selector = nil
		default:
			c.Selector = map[string]string{"zone": rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "zone")}
		}
	}
	if c.Replicas-c.Unavailable > w.ctl.Replicas-w.ctl.Unavailable {
		w.armed = false // more must be available: it has to get there first
	}
	if runFloor(c) > runFloor(w.ctl) {
		w.runArmed = false // more must run: it has to get there first
	}
	if c.Selector != nil && !maps.Equal(c.Selector, w.ctl.Selector) {
		w.armed = false // it may match a dead node only: nothing can be placed
	}
	if !maps.Equal(c.Selector, w.ctl.Selector) {
		w.moving = true
	}
	w.ctl = c
	w.bound = max(c.Replicas+c.Surge, min(w.bound, w.committed()))
}

// input is what the leader decides from.
func (w *world) input() Input {
	in := Input{Controller: w.ctl, Assigned: maps.Clone(w.assigned), Reports: map[string]Report{},
		ReportsRevision: w.mirrorRev, Released: maps.Clone(w.released), Now: w.now, Grace: simGrace, Health: w.health,
		Rollout: w.rollout, Watched: w.watched, DeadlineExceeded: w.deadline}
	for _, n := range w.nodes {
		in.Nodes = append(in.Nodes, Node{Name: n.name, Labels: map[string]string{"zone": n.zone}, Alive: n.alive, GoneSince: n.goneSince,
			Availability: n.availability})
		if r := w.mirror[n.name]; r != nil {
			in.Containers = append(in.Containers, r.containers...)
			in.Reports[n.name] = r.Report
		}
	}
	return in
}

// catchUp brings the leader's mirror of the reports up to date.
func (w *world) catchUp() {
	w.mirror = map[string]*simReport{}
	for _, n := range w.nodes {
		if n.report != nil {
			w.mirror[n.name] = n.report
		}
	}
	w.mirrorRev = w.rev
	for n := range w.unseen {
		if !w.killed[n] {
			delete(w.unseen, n)
		}
	}
}

// lead runs one decision and writes it, as the leader does.
func (w *world) lead() {
	r := Decide(w.input())
	w.health = r.Health
	w.rollout, w.watched = r.Rollout, r.Watched
	if len(r.Changes) == 0 {
		return
	}
	defer w.checkReplacements(r)
	w.rev++
	for _, ch := range r.Changes {
		if old, ok := w.assigned[ch.Slot]; ok && (ch.New == nil || ch.New.Node != old.Node) {
			w.released[ch.Slot] = ReleaseOf(old, w.rev)
		}
		if ch.New == nil {
			delete(w.assigned, ch.Slot)
			continue
		}
		a := *ch.New
		a.ModRev = w.rev
		w.assigned[ch.Slot] = a
	}
}

// see makes node n see the assignments as they are now.
func (w *world) see(n *simNode) {
	n.applied = map[int]Assignment{}
	for slot, a := range w.assigned {
		if a.Node == n.name {
			n.applied[slot] = a
		}
	}
}

// act is one round of node n running what it saw assigned: the node
// agent's part, and no more, as the node model says a node does
// (registry/nodemodel), with no burst limit. The slots it runs go into its
// report before it creates anything, and so do those whose successor it
// starts next to an outdated container.
func (w *world) act(n *simNode) {
	if n.report == nil || !slices.Equal(n.report.Slots, slotSetOf(w.slotsOf(n))) {
		w.writeReport(n, nil)
	}
	in := nodemodel.Input{Controller: w.ctl.ID, Hash: w.ctl.Hash,
		Burst: math.MaxInt, Window: w.ctl.AvailableAfter, Now: w.now}
	for slot, a := range n.applied {
		in.Assigned.Set(slot, registry.SlotAssignment{Assignment: api.Assignment{Node: a.Node, Revision: a.Revision, TemplateHash: a.Hash,
			OnDelete: a.OnDelete, StartFirst: a.StartFirst, Replace: a.Replace}, Rev: a.ModRev})
	}
	var live []*simContainer // as in.Containers
	for _, c := range n.containers {
		name := api.TaskName(w.ctl.ID, c.slot)
		if !c.named {
			name += "-old-" + c.id
		}
		mc := nodemodel.Container{Name: name, ID: c.id, Slot: c.slot, Hash: c.hash, Ready: c.ready, Since: c.started, Monitored: w.monitored(c)}
		if c.stopping {
			in.Removing = append(in.Removing, mc)
			continue
		}
		in.Containers = append(in.Containers, mc)
		live = append(live, c)
	}
	r := nodemodel.Plan(in)
	for _, i := range slices.Concat(r.Remove, r.Retire) {
		live[i].stopping = true
	}
	stopFirst := map[int]bool{}
	for _, rep := range r.Replace {
		if rep.StartFirst {
			live[rep.Container].named = false
		} else {
			live[rep.Container].stopping = true
			stopFirst[rep.Slot] = true
		}
	}
	creates, twice := r.Create[:0], map[int]bool{}
	for _, slot := range r.Create {
		a := n.applied[slot]
		if (!a.StartFirst || stopFirst[slot]) && slices.ContainsFunc(n.containers, func(c *simContainer) bool { return c.slot == slot && c.stopping }) {
			// stop first: the old ones of the slot go before the new one
			// starts, as a node's sync deletes before it creates
			continue
		}
		creates = append(creates, slot)
		if slices.ContainsFunc(n.containers, func(c *simContainer) bool { return c.slot == slot && !c.stopping }) {
			twice[slot] = true
		}
	}
	if !subset(twice, n.report.StartedFirst) {
		w.writeReport(n, twice)
	}
	for _, slot := range creates {
		if twice[slot] && !n.report.StartedFirst.Has(slot) {
			continue // its assignment changed: the node waits for its watch
		}
		w.create(n, slot, n.applied[slot].Hash)
	}
}

func subset(a map[int]bool, b SlotSet) bool {
	for k := range a {
		if !b.Has(k) {
			return false
		}
	}
	return true
}

func (w *world) create(n *simNode, slot int, hash string) *simContainer {
	w.ids++
	c := &simContainer{slot: slot, named: true, hash: hash, started: w.now, id: fmt.Sprintf("c%d", w.ids)}
	n.containers = append(n.containers, c)
	if live := w.live(); live > w.bound {
		w.t.Fatalf("node %s created slot %d: %d live, above the bound %d (replicas %d, maxSurge %d); %s", n.name, slot, live, w.bound, w.ctl.Replicas, w.ctl.Surge, w)
	}
	return c
}

// finishStops removes node n's stopping containers: a slow stop is done.
func (w *world) finishStops(n *simNode) {
	n.containers = slices.DeleteFunc(n.containers, func(c *simContainer) bool { return c.stopping })
}

// tick moves the clock: started containers become ready, and those of
// bad templates exit once they have run 2 s, within their monitor window.
func (w *world) tick(d time.Duration) {
	w.now = w.now.Add(d)
	for _, n := range w.nodes {
		w.exit(n, func(c *simContainer) bool { return w.bad[c.hash] && w.now.Sub(c.started) >= 2*time.Second })
		for _, c := range n.containers {
			c.ready = !c.sick
		}
	}
}

// exit removes node n's containers that crash: the history stopped them.
func (w *world) exit(n *simNode, crashes func(*simContainer) bool) {
	if slices.ContainsFunc(n.containers, crashes) {
		n.containers = slices.DeleteFunc(n.containers, crashes)
		w.runArmed = false
		w.unseen[n.name], w.killed[n.name] = true, true
	}
}

// slotsOf are the slots node n reports as its own: those it saw assigned
// and those it still has a container of.
func (w *world) slotsOf(n *simNode) map[int]bool {
	slots := map[int]bool{}
	for slot := range n.applied {
		slots[slot] = true
	}
	for _, c := range n.containers {
		slots[c.slot] = true
	}
	return slots
}

// slotSetOf is the set of the slots m holds.
func slotSetOf(m map[int]bool) SlotSet {
	var slots []int
	for slot, in := range m {
		if in {
			slots = append(slots, slot)
		}
	}
	return NewSlotSet(slots...)
}

// writeReport writes node n's report, with the slots of twice, whose
// successor it is about to start next to an outdated container, under
// StartedFirst. A slot it did not report before, or did not report there
// before, goes in only if it is still assigned as the node saw it (the
// transaction compares the assignment's ModRevision); otherwise the node
// drops it and waits for its watch.
func (w *world) writeReport(n *simNode, twice map[int]bool) {
	delete(w.killed, n.name)
	changed := func(slot int, a Assignment) bool {
		cur, ok := w.assigned[slot]
		return !ok || cur.ModRev != a.ModRev
	}
	for slot, a := range n.applied {
		if (n.report == nil || !n.report.Slots.Has(slot)) && changed(slot, a) {
			delete(n.applied, slot)
		}
	}
	w.rev++
	var startedFirst []int
	for slot := range twice {
		if a, ok := n.applied[slot]; ok && (n.report != nil && n.report.StartedFirst.Has(slot) || !changed(slot, a)) {
			startedFirst = append(startedFirst, slot)
		}
	}
	count := map[int]int{}
	for _, c := range n.containers {
		if count[c.slot]++; count[c.slot] == 2 {
			startedFirst = append(startedFirst, c.slot)
		}
	}
	r := &simReport{Report: Report{Slots: slotSetOf(w.slotsOf(n)), StartedFirst: NewSlotSet(startedFirst...)}}
	for _, c := range n.containers {
		r.containers = append(r.containers, Container{Node: n.name, Slot: c.slot, Named: c.named, Hash: c.hash, Live: true, Running: true, Ready: c.ready, StartedAt: c.started,
			Monitored: w.monitored(c), ID: c.id, Unhealthy: c.sick})
	}
	n.report = r
}

// monitored reports whether c has run through its monitor window by the
// node's engine: a node asks its engine when the window ends, so its
// report and its own plan see what runs now (registry/agent, windows.go).
func (w *world) monitored(c *simContainer) bool {
	return w.now.Sub(c.started) >= w.ctl.AvailableAfter
}

// check asserts the invariants that hold after every step.
func (w *world) check() {
	on := map[int]string{}
	for _, n := range w.nodes {
		for _, c := range n.containers {
			if other, ok := on[c.slot]; ok && other != n.name {
				w.t.Fatalf("slot %d live on nodes %s and %s", c.slot, other, n.name)
			}
			on[c.slot] = n.name
		}
	}
	w.bound = max(w.ctl.Replicas+w.ctl.Surge, min(w.bound, w.committed()))
	minAvailable := w.ctl.Replicas - w.ctl.Unavailable
	floor := minAvailable
	if w.moving {
		// a move stops first: it takes one down even with maxUnavailable 0
		floor = w.ctl.Replicas - max(w.ctl.Unavailable, 1)
	}
	ready := w.ready()
	if w.moving && ready >= minAvailable && w.settledOnSelector() {
		w.moving = false
	}
	w.checkRunning()
	switch {
	case w.armed && ready < floor:
		w.t.Fatalf("%d available, below replicas %d - maxUnavailable %d; %s", ready, w.ctl.Replicas, w.ctl.Unavailable, w)
	case !w.armed && len(w.unseen) == 0 && ready >= minAvailable && newDecision(w.input()).availableCount() >= minAvailable:
		// available, and the status says so: from here on it stays so
		w.armed = true
	}
}

// runFloor is how many slots run whatever the leader does: a move or a
// replacement stops first, and takes one down even with maxUnavailable 0.
func runFloor(c Controller) int {
	return c.Replicas - max(c.Unavailable, 1)
}

// checkRunning asserts that once the floor of slots ran, and the leader
// saw them run, as many run on (a container stopping still runs) unless
// the history stopped one: a claim written before a create does not run.
func (w *world) checkRunning() {
	floor, runs := runFloor(w.ctl), len(w.runningSlots())
	switch {
	case w.runArmed && runs < floor:
		w.t.Fatalf("%d slots running, below replicas %d - max(1, maxUnavailable %d); %s", runs, w.ctl.Replicas, w.ctl.Unavailable, w)
	case !w.runArmed && len(w.unseen) == 0 && runs >= floor && w.leaderSeesRunning() >= floor:
		w.runArmed = true
	}
}

// runningSlots are the slots a container of which runs on a live node.
func (w *world) runningSlots() map[int]bool {
	slots := map[int]bool{}
	for _, n := range w.nodes {
		for _, c := range n.containers {
			slots[c.slot] = true
		}
	}
	return slots
}

// leaderSeesRunning counts the slots the leader's mirror shows running.
func (w *world) leaderSeesRunning() int {
	d := newDecision(w.input())
	defer d.release()
	n := 0
	for slot := range d.next {
		if d.runsNow(slot) {
			n++
		}
	}
	return n
}

// settledOnSelector reports whether every slot is assigned to, and every
// container runs on, a node that matches the selector and is not drained.
func (w *world) settledOnSelector() bool {
	for _, a := range w.assigned {
		if !w.keeps(w.node(a.Node)) {
			return false
		}
	}
	for _, n := range w.nodes {
		if len(n.containers) > 0 && !w.keeps(n) {
			return false
		}
	}
	return true
}

// keeps reports whether node n may keep the controller's slots.
func (w *world) keeps(n *simNode) bool {
	return n.availability != api.NodeDrain && matches(w.ctl.Selector, map[string]string{"zone": n.zone})
}

func (w *world) node(name string) *simNode {
	for _, n := range w.nodes {
		if n.name == name {
			return n
		}
	}
	w.t.Fatalf("no node %s", name)
	return nil
}

// changeNodeConfig changes a node's availability or its zone label, as
// rcctl cordon, drain and label node do.
func (w *world) changeNodeConfig(t *rapid.T) {
	n := w.pickNode(t)
	if rapid.Bool().Draw(t, "availability") {
		n.availability = rapid.SampledFrom([]api.NodeAvailability{"", api.NodePause, api.NodeDrain}).Draw(t, "to")
	} else {
		n.zone = rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "zone")
	}
	w.moving = true
}

func (w *world) pickNode(t *rapid.T) *simNode {
	return rapid.SampledFrom(w.nodes).Draw(t, "node")
}

func TestDecideKeepsTheBoundsOverRandomHistories(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t)
		t.Repeat(map[string]func(*rapid.T){
			"spec":        w.changeSpec,
			"node config": w.changeNodeConfig,
			"lead":        func(*rapid.T) { w.lead() },
			"catch up":    func(*rapid.T) { w.catchUp() },
			"new leader": func(*rapid.T) {
				// it remembers nothing, and lists the reports first
				w.released, w.health, w.watched = map[int]Release{}, nil, nil
				w.catchUp()
			},
			"see": func(t *rapid.T) { w.see(w.pickNode(t)) },
			"deadline": func(*rapid.T) {
				// a node reports the rollout stalled past its deadline
				w.deadline = w.ctl.Hash != w.rollout.CompletedHash
			},
			"act": func(t *rapid.T) {
				if n := w.pickNode(t); n.alive {
					w.act(n)
				}
			},
			"stop": func(t *rapid.T) { w.finishStops(w.pickNode(t)) },
			"crash": func(t *rapid.T) {
				// a node's containers of bad templates exit, however young
				n := w.pickNode(t)
				w.exit(n, func(c *simContainer) bool { return w.bad[c.hash] })
			},
			"tick": func(t *rapid.T) { w.tick(time.Duration(rapid.IntRange(1, 12).Draw(t, "seconds")) * time.Second) },
			"report": func(t *rapid.T) {
				if n := w.pickNode(t); n.alive {
					w.writeReport(n, nil)
				}
			},
			"kill container": func(t *rapid.T) {
				n := w.pickNode(t)
				if len(n.containers) > 0 {
					i := rapid.IntRange(0, len(n.containers)-1).Draw(t, "container")
					n.containers = slices.Delete(n.containers, i, i+1)
					w.armed, w.runArmed = false, false
					w.unseen[n.name], w.killed[n.name] = true, true
				}
			},
			"sicken container": func(t *rapid.T) {
				n := w.pickNode(t)
				if len(n.containers) > 0 {
					w.sicken(n, n.containers[rapid.IntRange(0, len(n.containers)-1).Draw(t, "container")])
				}
			},
			"kill node": func(t *rapid.T) {
				if n := w.pickNode(t); n.alive {
					// the machine dies: its containers, its lease and its reports go
					n.alive, n.goneSince, n.containers, n.report = false, w.now, nil, nil
					n.applied = map[int]Assignment{}
					// until the leader's mirror holds the node's next report, it
					// may count the dead as available
					w.armed, w.runArmed = false, false
					w.unseen[n.name], w.killed[n.name] = true, true
				}
			},
			"return node": func(t *rapid.T) {
				if n := w.pickNode(t); !n.alive {
					n.alive = true
					w.see(n)
				}
			},
			"": func(*rapid.T) { w.check() },
		})
		w.converge()
	})
}

// sicken makes c's health check fail: not ready, and reported unhealthy;
// it still runs.
func (w *world) sicken(n *simNode, c *simContainer) {
	c.sick, c.ready = true, false
	w.armed = false
	w.unseen[n.name], w.killed[n.name] = true, true
}

// One history the random ones are unlikely to draw, as CI met it on a
// loaded engine: a selector move of three slots, the first moved slot
// claimed on its new node and not created yet (a slow create), and a
// slot left on the old node not ready. The floor of running slots holds.
func TestDecideKeepsTheFloorRunningWhileAMovedSlotIsCreated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t)
		w.bad, w.rollout = map[string]bool{}, api.RolloutRecord{}
		w.ctl.Selector = map[string]string{"zone": "a"}
		for range 4 {
			w.round()
		}
		a, b := w.node("a"), w.node("b")
		if got := len(a.containers); got != 3 {
			t.Fatalf("%d containers on a after settling, want 3; %s", got, w)
		}
		w.ctl.Selector, w.moving = map[string]string{"zone": "b"}, true
		w.catchUp()
		w.lead() // slot 3 off a
		w.see(a)
		w.act(a)
		w.finishStops(a)
		w.writeReport(a, nil)
		w.check()
		w.catchUp()
		w.lead() // slot 3 on b
		w.see(b)
		w.writeReport(b, nil) // b claims slot 3; its create is slow
		for _, c := range a.containers {
			if c.slot == 2 {
				w.sicken(a, c)
			}
		}
		w.writeReport(a, nil)
		w.catchUp()
		w.check()
		w.lead()
		w.see(a)
		w.act(a)
		w.finishStops(a)
		w.check()
		w.converge()
	})
}

// round is one step of every part, in order: the leader decides from
// reports it caught up with, each node runs what is assigned to it and
// reports, and the clock moves on.
func (w *world) round() {
	w.catchUp()
	w.lead()
	for _, n := range w.nodes {
		w.see(n)
		w.act(n)
		w.finishStops(n)
	}
	w.tick(6 * time.Second)
	for _, n := range w.nodes {
		w.writeReport(n, nil)
	}
	w.check()
}

// converge heals every fault and runs the registry until it settles, then
// checks that it did.
func (w *world) converge() {
	for _, n := range w.nodes {
		if !n.alive {
			n.alive = true
		}
		// every node active in its own zone again: the selector matches one
		n.availability, n.zone = "", n.name
	}
	w.moving = true
	w.bad = map[string]bool{}
	for _, n := range w.nodes {
		for _, c := range n.containers {
			c.sick = false
		}
	}
	for range 40 {
		w.round()
	}
	if got := len(w.assigned); got != w.ctl.Replicas {
		w.t.Fatalf("%d slots assigned after the history, want %d", got, w.ctl.Replicas)
	}
	want := map[string]bool{w.ctl.Hash: true}
	if rec := w.rollout; rec.RollingBack(w.ctl.Hash) {
		// rolled back: on the restored template; a rollback that failed
		// holds where it is, on any
		want = map[string]bool{rec.CompletedHash: true, w.ctl.Hash: rec.RollbackFailed}
	}
	for slot, a := range w.assigned {
		if !want[a.Hash] && !w.rollout.RollbackFailed {
			w.t.Fatalf("slot %d runs template %s after the history, want one of %v (rollout record %+v)", slot, a.Hash, want, w.rollout)
		}
		if !w.keeps(w.node(a.Node)) {
			w.t.Fatalf("slot %d on node %s, which does not match %v; %s", slot, a.Node, w.ctl.Selector, w)
		}
	}
	if live, ready := w.live(), w.ready(); live != w.ctl.Replicas || ready != w.ctl.Replicas {
		w.t.Fatalf("%d live, %d available after the history, want %d of each", live, ready, w.ctl.Replicas)
	}
}

// checkReplacements asserts that a decision that replaced unhealthy slots
// left at most max(1, maxUnavailable) slots replaced for ill health with
// nothing running that stays, unless the history killed or sickened
// something the leader has not seen yet.
func (w *world) checkReplacements(r Result) {
	if len(r.Replaced) == 0 || len(w.unseen) > 0 {
		return
	}
	down := 0
	for slot, a := range w.assigned {
		if a.Replace == "" || !w.node(a.Node).alive {
			continue
		}
		if !slices.ContainsFunc(w.node(a.Node).containers, func(c *simContainer) bool { return c.slot == slot && !c.stopping && c.id != a.Replace }) {
			down++
		}
	}
	if limit := max(1, w.ctl.Unavailable); down > limit {
		w.t.Fatalf("%d slots replaced for ill health run nothing, above max(1, maxUnavailable %d); %s", down, w.ctl.Unavailable, w)
	}
}

func (w *world) String() string {
	s := fmt.Sprintf("spec %+v; assigned %v;", w.ctl, w.assigned)
	for _, n := range w.nodes {
		s += fmt.Sprintf(" node %s zone=%s %q alive=%v:", n.name, n.zone, n.availability, n.alive)
		for _, c := range n.containers {
			s += fmt.Sprintf(" %+v", *c)
		}
	}
	return s
}

// A history from CI on a loaded engine: a stop-first rollout to a template
// whose containers exit within their monitor window. The node reported its
// first new container running, then the container exited, and the node
// had not reported that yet when the window ended by the leader's clock.
// The leader takes the next step only on the node's word that the
// container ran through its window, so the old ones stay.
func TestDecideTakesNoStepOnAReportOlderThanTheWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t)
		w.bad, w.rollout = map[string]bool{}, api.RolloutRecord{}
		for range 4 {
			w.round()
		}
		w.rev++
		w.ctl.Hash, w.ctl.Revision, w.bad["t2"] = "t2", w.rev, true
		w.catchUp()
		w.lead() // one slot to t2, stop first
		for _, n := range w.nodes {
			w.see(n)
			w.act(n) // the old container stops
			w.finishStops(n)
			w.act(n) // the new one starts
			w.writeReport(n, nil)
		}
		w.tick(time.Second)
		for _, n := range w.nodes {
			w.writeReport(n, nil) // the new one runs, ready
		}
		w.catchUp()
		w.check()
		w.now = w.now.Add(5 * time.Second)
		for _, n := range w.nodes {
			// the new one has exited; no node has reported it
			w.exit(n, func(c *simContainer) bool { return w.bad[c.hash] })
		}
		w.lead()
		for _, n := range w.nodes {
			w.see(n)
			w.act(n)
		}
		w.check()
	})
}
