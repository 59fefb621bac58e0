package leader

// This file is the dry run of `rcctl apply --dry-run` and `rcctl scale
// --dry-run`: what the registry would do to a controller's containers,
// container by container and node by node, if a spec were written. It
// makes the leader's own decision (decide.Decide, on the input that
// decisionInput builds for the leader too) from the would-be spec, the
// assignments, the nodes' reports and the registered nodes as etcd holds
// them; then it plays the nodes, each doing at once what it is assigned,
// every container it creates available at once; then it decides again,
// until nothing changes. The nodes do what the node model says a node
// does (registry/nodemodel), as the node agent does. The steps are what
// the nodes did, in order. Pure: it reads its input and writes nothing
// anywhere, and it needs no Docker.

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
	"github.com/replication-manager/replication-manager/registry/nodemodel"
)

// DryRunInput is what a dry run is made from: a would-be spec and the
// registry as etcd holds it.
type DryRunInput struct {
	// Spec is the would-be spec, valid (api.Validate), and Revision the
	// ModRevision it would have once written: its current one when it is
	// unchanged.
	Spec     *api.ReplicationController
	Revision int64
	// Controllers are the stored specs (Store.ListControllers): the other
	// controllers' slots take room and host ports on the nodes. The one of
	// Spec's id is left out.
	Controllers []registry.Spec
	// Assignments are every controller's (Store.ListAssignments).
	Assignments map[string]map[int]api.Assignment
	// Reports are the nodes' reports on Spec's controller
	// (Store.ListReports).
	Reports []api.NodeReport
	// Nodes are the registered nodes (Store.ListNodes). A node that holds
	// assignments but is not registered counts as gone past the grace
	// period, and its report as gone with its lease: the dry run shows
	// where its slots go unless it comes back.
	Nodes []api.Node
	// Configs are the nodes' configs (Store.ListNodeConfigs): their
	// availability, and their labels over the registered ones.
	Configs map[string]api.NodeConfig
	// MaxReplicas is the largest replicas a spec may ask for (0:
	// api.DefaultMaxReplicas).
	MaxReplicas int
	Now         time.Time
	// Rollout is the leader's record of the controller's rollouts, from
	// its stored status (nil: none): a rollback under way goes on in the
	// dry run as it would in the leader.
	Rollout *api.RolloutRecord
}

// DryRunStep is one thing a node would do to a container.
type DryRunStep struct {
	// Action is "create", "remove", "replace" or "move".
	Action string
	// Container is the container's name: its slot's, <id>-<slot>, and
	// Slot that slot's number.
	Container string
	Slot      int
	// Node is the node that would do it; for a move, the node the
	// container moves to, and From the node it leaves.
	Node string
	From string
	// Detail says why, for people: "template a → b, stopped first",
	// "scale-down to 3", "nodeSelector no longer matches node b", "node c
	// is gone".
	Detail string
}

// DryRunPlan is what a dry run found.
type DryRunPlan struct {
	// Steps are the containers the nodes would change, in order.
	Steps []DryRunStep
	// Unschedulable are the containers that no node could take once the
	// rest is done, and Reason why (the leader's decision says).
	Unschedulable []string
	Reason        string
	// Stall says why the rollout would stall ("slot web-5 fits no node:
	// ..."), as the status would say it Blocked, when slots that fit no
	// node hold it up with containers of an older template left; Waiting
	// are those containers, which would be replaced once it moves on. ""
	// and none when the rollout would finish.
	Stall   string
	Waiting []DryRunStep
	// Settled is false when the dry run stopped at its bound of rounds
	// with the decision still changing: the steps are the first ones.
	Settled bool
	// Images say, per node that would make a container, whether it would
	// pull each image of the template, as far as its report knows.
	Images []DryRunImage
	// Restores says, when the leader rolls the spec's template back (a
	// rollback under way or done), which template the slots return to
	// and from which; "" otherwise.
	Restores string
}

// dryRunRounds bounds the decisions of a dry run: a change converges in
// a few per replica. dryRunWork bounds them too, over the slots each one
// decides, so that a dry run of many replicas ends in seconds.
const (
	dryRunRounds = 10_000
	dryRunWork   = 20_000_000
)

// dryRunLongAgo is how long before the simulated now a container the dry
// run creates started: more than any minReadySeconds or monitorSeconds
// (one day at most), so that it counts available at once.
const dryRunLongAgo = 30 * 24 * time.Hour

// DryRun returns what the registry would do to the containers of
// in.Spec's controller if in.Spec were written. It errs only when the
// leader would refuse the spec.
func DryRun(in DryRunInput) (DryRunPlan, error) {
	// a leader that only decodes specs (leadermirror.go), with the
	// validation rcctl applies: its store has no client, and it never runs
	leader := &ReplicationManager{store: registry.NewStore(nil, ""),
		opts: Options{MaxReplicas: in.MaxReplicas, Policy: api.AllowAllPolicy()}.withDefaults()}
	rc := in.Spec
	sp, err := dryRunSpec(leader, rc, in.Revision)
	if err != nil {
		return DryRunPlan{}, err
	}
	switch {
	case sp == nil:
		return DryRunPlan{}, fmt.Errorf("controller %q: not a controller id", rc.ID)
	case sp.invalid != nil:
		return DryRunPlan{}, fmt.Errorf("controller %q is invalid: %w", rc.ID, sp.invalid)
	}
	d := &dryRun{
		id: rc.ID, sp: sp, now: in.Now, rev: 1, reports: map[string]*api.NodeReport{},
		nodes: map[string]*nodeState{}, configs: in.Configs, others: map[string]*nodeLoad{},
		why: map[int]leaving{}, moving: map[int]int{}, order: map[int]int{},
	}
	if in.Rollout != nil {
		d.rollout = *in.Rollout
	}
	if cs := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers; len(cs) > 0 {
		d.image = cs[0].Image
	}
	for _, n := range in.Nodes {
		d.nodes[n.Name] = &nodeState{node: n, alive: true}
	}
	specs := map[string]*schedSpec{}
	for _, s := range in.Controllers {
		if s.ID == rc.ID || s.Err != nil || s.Controller == nil {
			continue // no spec: its slots hold no room, as the leader counts them
		}
		if other, err := dryRunSpec(leader, s.Controller, s.ModRevision); err == nil {
			specs[s.ID] = other
		}
	}
	for id, slots := range in.Assignments {
		if id == rc.ID {
			for _, slot := range slices.Sorted(maps.Keys(slots)) { // in order: appended, not inserted
				d.assigned.Set(slot, registry.SlotAssignment{Assignment: slots[slot], Rev: d.rev})
			}
			continue
		}
		for _, a := range slots {
			loadIn(d.others, a.Node).add(specs[id], 1)
		}
	}
	for _, r := range in.Reports {
		if d.nodes[r.Node] == nil {
			continue // gone with the node's lease
		}
		r.Tasks = slices.Clone(r.Tasks)
		d.reports[r.Node] = &r
	}

	var res decide.Result
	var plan DryRunPlan
	rounds := min(dryRunRounds, max(100, dryRunWork/max(1, d.assigned.Len(), rc.DesiredState.Replicas)))
	for range rounds {
		acted, recheck := d.nodesAct()
		din := d.input()
		res = decide.Decide(din)
		d.rollout = res.Rollout
		if len(res.Changes) > 0 {
			d.apply(din, res.Changes)
			continue
		}
		if acted {
			continue
		}
		if recheck = registry.Sooner(recheck, res.RecheckAfter); recheck > 0 {
			// a container of etcd's becomes available later: then
			d.now = d.now.Add(recheck)
			continue
		}
		plan.Settled = true
		break
	}
	plan.Steps = d.steps
	for _, slot := range res.Unschedulable {
		plan.Unschedulable = append(plan.Unschedulable, api.TaskName(rc.ID, slot))
	}
	plan.Reason = res.Reason
	plan.Stall, plan.Waiting = d.stall(res)
	plan.Restores = dryRunRestores(d.rollout, d.sp.hash)
	if plan.Restores == "" {
		// (a rollback creates containers of the restored template, whose
		// images the spec does not name)
		plan.Images = dryRunImages(rc, in.Reports, plan.Steps)
	}
	return plan, nil
}

// stall says why the rollout would stall once the dry run settles with
// res, and which containers of an older template would wait: slots that
// fit no node count against maxUnavailable (or take the surge), so no
// more old containers go. A paused or OnDelete rollout is not stalled:
// it waits by design.
func (d *dryRun) stall(res decide.Result) (string, []DryRunStep) {
	if len(res.Unschedulable) == 0 || d.sp.ctl.Paused || d.sp.ctl.OnDelete {
		return "", nil
	}
	var waiting []DryRunStep
	for _, node := range slices.Sorted(maps.Keys(d.reports)) {
		for _, t := range d.reports[node].Tasks {
			if liveState(t.State) && t.Slot > 0 && t.Name == api.TaskName(d.id, t.Slot) && t.TemplateHash != d.sp.hash {
				waiting = append(waiting, DryRunStep{Action: "replace", Container: t.Name, Slot: t.Slot, Node: node,
					Detail: fmt.Sprintf("template %s → %s", t.TemplateHash, d.sp.hash)})
			}
		}
	}
	if len(waiting) == 0 {
		return "", nil
	}
	slices.SortStableFunc(waiting, func(a, b DryRunStep) int { return cmp.Compare(a.Slot, b.Slot) })
	return unschedulableMessage(d.id, &unschedulable{slots: res.Unschedulable, reason: res.Reason}), waiting
}

// dryRunSpec is rc at revision rev as the leader sees it once stored.
func dryRunSpec(leader *ReplicationManager, rc *api.ReplicationController, rev int64) (*schedSpec, error) {
	data, err := api.Encode(rc)
	if err != nil {
		return nil, fmt.Errorf("controller %q: %w", rc.ID, err)
	}
	// nil for an id that is not a key's last segment
	return leader.decodeSpec(registry.KV{Key: leader.store.ControllerKey(rc.ID), Value: data, ModRev: rev, CreateRev: rev}), nil
}

// dryRun is the simulated registry of one dry run.
type dryRun struct {
	id    string
	sp    *schedSpec
	image string
	// assigned are the controller's assignments, and reports its nodes'
	// reports, as the simulation leaves them; assigned is the dry run's
	// own, changed in place.
	assigned registry.SlotAssignments
	reports  map[string]*api.NodeReport
	// nodes are the registered ones; others what the other controllers'
	// slots hold on each node.
	nodes   map[string]*nodeState
	configs map[string]api.NodeConfig
	others  map[string]*nodeLoad
	now     time.Time
	// rev numbers the simulated assignment writes; seq the containers.
	rev, seq int64
	steps    []DryRunStep
	// round are the steps of the nodes' current round, and toMove its
	// containers removed to move.
	round  []DryRunStep
	toMove map[int]bool
	// why are the slots the last decisions took off a node, and why.
	why map[int]leaving
	// moving are the steps of containers removed to move, by slot: the
	// create that places the slot again makes the step a move.
	moving map[int]int
	// order is each slot's place in the last decision's changes, which
	// orders the nodes' steps that follow it.
	order map[int]int
	// rollout is the rollout record as the last decision left it.
	rollout api.RolloutRecord
}

// leaving is why a slot left node.
type leaving struct {
	node, reason string
	// move: the slot is placed again elsewhere.
	move bool
}

// input is the leader's decision input from the simulated registry.
func (d *dryRun) input() decide.Input {
	loads := make(map[string]*nodeLoad, len(d.others))
	for name, l := range d.others {
		c := *l
		c.ports = maps.Clone(l.ports)
		loads[name] = &c
	}
	for _, a := range d.assigned.All() {
		loadIn(loads, a.Node).add(d.sp, 1)
	}
	var view nodeView
	for name, ns := range d.nodes {
		view.set(name, ns, d.configs[name], loads[name], time.Time{})
	}
	for _, a := range d.assigned.All() {
		if d.nodes[a.Node] == nil {
			view.set(a.Node, nil, d.configs[a.Node], loads[a.Node], time.Time{}) // not registered: gone
		}
	}
	reports := make(map[string]*leaderReport, len(d.reports))
	for node, r := range d.reports {
		reports[node] = newLeaderReport(d.id, r)
	}
	in, _ := decisionInput(decisionSource{id: d.id, spec: d.sp, assignments: d.assigned, reports: reports, now: d.now, grace: DefaultNodeGrace})
	in.Nodes = view.forController(nil, d.sp, in.Assigned, loads)
	in.Rollout = d.rollout
	return in
}

func loadIn(loads map[string]*nodeLoad, node string) *nodeLoad {
	l := loads[node]
	if l == nil {
		l = &nodeLoad{}
		loads[node] = l
	}
	return l
}

// apply writes a decision's changes, as the leader does, and notes why
// each slot that leaves its node leaves it.
func (d *dryRun) apply(in decide.Input, changes []decide.Change) {
	clear(d.order)
	for i, c := range changes {
		d.order[c.Slot] = i
		if c.Old.ModRev != 0 && (c.New == nil || c.New.Node != c.Old.Node) {
			d.why[c.Slot] = leavingNode(in, c.Slot, c.Old.Node, c.New == nil)
		}
		if c.New == nil {
			d.assigned.Delete(c.Slot)
			continue
		}
		d.rev++
		d.assigned.Set(c.Slot, registry.SlotAssignment{Assignment: assignmentOf(*c.New), Rev: d.rev})
	}
}

// leavingNode says why the decision took slot off node.
func leavingNode(in decide.Input, slot int, node string, removed bool) leaving {
	var n *decide.Node
	for i := range in.Nodes {
		if in.Nodes[i].Name == node {
			n = &in.Nodes[i]
		}
	}
	switch {
	case n == nil || !n.Alive:
		return leaving{node, "node " + node + " is gone", true}
	case n.Availability == api.NodeDrain:
		return leaving{node, "node " + node + " is drained", true}
	case !selectorAllows(in.Controller.Selector, n.Labels):
		return leaving{node, "nodeSelector no longer matches node " + node, true}
	case in.Blocked[slot][node]:
		return leaving{node, "its name is taken on node " + node + " by a container outside the set", true}
	case removed:
		return leaving{node, fmt.Sprintf("scale-down to %d", in.Controller.Replicas), false}
	}
	return leaving{node, "moved off node " + node, true}
}

// selectorAllows is decide's nodeSelector match: an empty one allows
// every node.
func selectorAllows(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// hashOf is the template an assignment runs.
func (d *dryRun) hashOf(a registry.SlotAssignment) string {
	return nodemodel.HashOf(a.Assignment, d.sp.hash)
}

// nodesAct makes every registered node do at once what it is assigned,
// and reports whether anything changed, and when a node would look
// again though nothing changes (0: never).
func (d *dryRun) nodesAct() (acted bool, recheck time.Duration) {
	d.round, d.toMove = d.round[:0], map[int]bool{}
	byNode := map[string]registry.SlotAssignments{} // fresh values, built in place
	for slot, a := range d.assigned.All() {
		mine := byNode[a.Node]
		mine.Set(slot, a)
		byNode[a.Node] = mine
	}
	for _, node := range slices.Sorted(maps.Keys(d.nodes)) {
		changed, after := d.nodeActs(node, byNode[node])
		acted = acted || changed
		recheck = registry.Sooner(recheck, after)
	}
	slices.SortStableFunc(d.round, func(a, b DryRunStep) int {
		return cmp.Compare(d.rank(a), d.rank(b))
	})
	for _, s := range d.round {
		if s.Action == "remove" && d.toMove[s.Slot] {
			d.moving[s.Slot] = len(d.steps)
		}
		d.steps = append(d.steps, s)
	}
	return acted, recheck
}

// rank orders a round's steps as the decision ordered its changes.
func (d *dryRun) rank(s DryRunStep) int {
	if i, ok := d.order[s.Slot]; ok {
		return i
	}
	return len(d.order)
}

// dryRunPasses bounds the passes of the node model a node makes in one
// round: the first does everything the burst allows, which in a dry run
// is everything, and the second retires the containers renamed out for
// successors that are available at once.
const dryRunPasses = 4

// nodeActs makes node run exactly its assigned slots, mine, as the node
// model says a node does (registry/nodemodel), pass after pass until it
// has nothing left to do: it removes its containers of slots not assigned
// to it, replaces those of another template (but not under OnDelete) and
// the unhealthy ones the leader names, and creates the missing ones whose
// name is free there. Its containers keep running: each whose monitor
// window has ended it reports monitored, as a node does once its engine
// says so. It reports whether anything changed, and when the node would
// look again (0: never).
func (d *dryRun) nodeActs(node string, mine registry.SlotAssignments) (bool, time.Duration) {
	r := d.reports[node]
	if r == nil {
		r = &api.NodeReport{Node: node, Status: api.ReplicationControllerStatus{ID: d.id}}
	}
	tasks := make([]api.ReportedTask, 0, len(r.Tasks))
	changed := false
	var windows time.Duration // until a window ends
	for _, t := range r.Tasks {
		// one that is not live goes, and its slot is created again
		if !liveState(t.State) {
			changed = true
			continue
		}
		if c := reportedContainer(d.id, "", t); c.Running && !t.Monitored {
			ran := d.now.Sub(c.StartedAt)
			t.Monitored = ran >= d.sp.ctl.AvailableAfter
			changed = changed || t.Monitored
			windows = registry.Sooner(windows, d.sp.ctl.AvailableAfter-ran)
		}
		tasks = append(tasks, t)
	}
	slices.SortStableFunc(tasks, func(a, b api.ReportedTask) int { return cmp.Compare(a.Slot, b.Slot) })
	var recheck time.Duration
	for range dryRunPasses {
		res := nodemodel.Plan(d.modelInput(mine, tasks, r.BlockedSlots))
		recheck = registry.Sooner(res.RecheckAfter, windows)
		if len(res.Remove) == 0 && len(res.Replace) == 0 && len(res.Retire) == 0 && len(res.Create) == 0 {
			break
		}
		tasks = d.play(node, mine, tasks, res)
		changed = true
	}
	slots := mine.Slots()
	if !changed && slices.Equal(r.Slots, slots) {
		return false, recheck
	}
	_, reported := d.reports[node]
	if len(tasks) == 0 && len(slots) == 0 && len(r.BlockedSlots) == 0 {
		delete(d.reports, node) // a node with nothing of the controller does not report on it
		return reported, recheck
	}
	nr := *r
	nr.Tasks, nr.Slots, nr.StartedFirst = tasks, slots, startedFirst(tasks)
	d.reports[node] = &nr
	return true, recheck
}

// startedFirst are the slots of which tasks hold two containers or
// more, in order, as a node reports them.
func startedFirst(tasks []api.ReportedTask) []int {
	count := make(map[int]int, len(tasks))
	var out []int
	for _, t := range tasks {
		if count[t.Slot]++; count[t.Slot] == 2 {
			out = append(out, t.Slot)
		}
	}
	slices.Sort(out)
	return out
}

// modelInput is the node model's input of a node whose live containers
// of the controller are tasks: a dry run has no burst limit.
func (d *dryRun) modelInput(mine registry.SlotAssignments, tasks []api.ReportedTask, blocked []int) nodemodel.Input {
	cs := make([]nodemodel.Container, len(tasks))
	for i, t := range tasks {
		c := reportedContainer(d.id, "", t)
		cs[i] = nodemodel.Container{Name: t.Name, ID: t.ID, Slot: t.Slot, Hash: t.TemplateHash, Ready: c.Ready, Since: c.StartedAt, Monitored: c.Monitored}
	}
	return nodemodel.Input{Controller: d.id, Assigned: mine, Hash: d.sp.hash, Containers: cs, Blocked: blocked,
		Burst: math.MaxInt, Window: d.sp.ctl.AvailableAfter, Now: d.now}
}

// play carries out one pass of the node model on node's tasks, records
// its steps, and returns the tasks it leaves: a replaced or created
// container is running, ready and available at once.
func (d *dryRun) play(node string, mine registry.SlotAssignments, tasks []api.ReportedTask, res nodemodel.Result) []api.ReportedTask {
	removed := make(map[int]bool, len(res.Remove))
	for _, i := range res.Remove {
		removed[i] = true
	}
	retired := make(map[int]bool, len(res.Retire))
	for _, i := range res.Retire {
		retired[i] = true
	}
	replaced := make(map[int]nodemodel.Replacement, len(res.Replace))
	for _, rep := range res.Replace {
		replaced[rep.Container] = rep
	}
	out := make([]api.ReportedTask, 0, len(tasks)+len(res.Create))
	succeeded := map[int]bool{} // the replaced slots, whose successor is made
	for i, t := range tasks {
		rep, ok := replaced[i]
		switch {
		case removed[i]:
			d.removed(node, t)
			continue
		case retired[i]:
			continue // renamed out for its successor: it goes with that replace
		case !ok:
			out = append(out, t)
			continue
		case rep.Unhealthy:
			d.round = append(d.round, DryRunStep{Action: "replace", Container: t.Name, Slot: t.Slot, Node: node,
				Detail: "unhealthy (onUnhealthy: replace), stopped first"})
		case rep.StartFirst:
			d.round = append(d.round, DryRunStep{Action: "replace", Container: t.Name, Slot: t.Slot, Node: node,
				Detail: fmt.Sprintf("template %s → %s, started first", t.TemplateHash, rep.Hash)})
			t.Name += "-old-" + t.ID // out of the slot's name until its successor is available
			out = append(out, t)
		default:
			d.round = append(d.round, DryRunStep{Action: "replace", Container: t.Name, Slot: t.Slot, Node: node,
				Detail: fmt.Sprintf("template %s → %s, stopped first", t.TemplateHash, rep.Hash)})
		}
		a, _ := mine.Get(rep.Slot)
		out = append(out, d.newTask(rep.Slot, a))
		succeeded[rep.Slot] = true
	}
	for _, slot := range res.Create {
		if !succeeded[slot] {
			d.created(node, slot)
			a, _ := mine.Get(slot)
			out = append(out, d.newTask(slot, a))
		}
	}
	return out
}

// removed records node's removal of t, a live container.
func (d *dryRun) removed(node string, t api.ReportedTask) {
	step := DryRunStep{Action: "remove", Container: t.Name, Slot: t.Slot, Node: node}
	w, ok := d.why[t.Slot]
	switch {
	case ok && w.node == node:
		step.Detail = w.reason
		delete(d.why, t.Slot)
		d.toMove[t.Slot] = w.move
	case t.Slot <= 0 || t.Name != api.TaskName(d.id, t.Slot):
		step.Detail = "not a slot's container"
	default:
		if a, assigned := d.assigned.Get(t.Slot); assigned {
			step.Detail = "the slot is assigned to node " + a.Node
		} else {
			step.Detail = "the slot is not assigned"
		}
	}
	d.round = append(d.round, step)
}

// created records node's create of slot: the end of a move when an
// earlier round took the slot's container off another node to move it.
func (d *dryRun) created(node string, slot int) {
	if i, ok := d.moving[slot]; ok {
		delete(d.moving, slot)
		s := &d.steps[i]
		if s.Node != node {
			s.Action, s.From, s.Node = "move", s.Node, node
			return
		}
	}
	step := DryRunStep{Action: "create", Container: api.TaskName(d.id, slot), Slot: slot, Node: node}
	if w, ok := d.why[slot]; ok && w.node != node {
		step.Detail = w.reason
		delete(d.why, slot)
	}
	d.round = append(d.round, step)
}

// newTask is the container a node creates for slot: running, ready,
// started long ago, and monitored since.
func (d *dryRun) newTask(slot int, a registry.SlotAssignment) api.ReportedTask {
	d.seq++
	hash := d.hashOf(a)
	image := ""
	if hash == d.sp.hash {
		image = d.image
	}
	started := d.now.Add(-dryRunLongAgo)
	return api.ReportedTask{Name: api.TaskName(d.id, slot), ID: "dry-run-" + strconv.FormatInt(d.seq, 10), Slot: slot,
		Image: image, State: api.StateRunning, TemplateHash: hash, Created: started, StartedAt: started, Monitored: true}
}
