package decide

// This file is the decision itself, in the order it is made:
//
//  1. slots on a node gone past its grace lose it, and are placed again;
//  2. a scale-down takes the least useful slots away;
//  3. the slots a node can no longer run (it is drained, its labels no
//     longer match the selector, or their name is taken there) move in
//     two phases, paced, unless no other node can take them: the
//     assignment goes first, and the slot is placed again only once no
//     node reports a live container of it;
//  4. missing slots are placed, the lowest free numbers first;
//  5. a rolling update gives outdated slots the current template, start
//     first while the surge allows, else stop first while the
//     availability allows.
//
// Every bound is counted from the leader's own assignments as well as
// the reports: a slot whose assigned container no report shows yet
// counts as live (the node may start it at any moment), as unavailable,
// and as not running. So a stale or missing report can delay a step,
// never let one break a bound.

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// Decide returns the next assignments of one controller.
func Decide(in Input) Result {
	c := in.Controller
	var r Result
	switch {
	case c.Gone:
		for _, slot := range slices.Sorted(maps.Keys(in.Assigned)) {
			r.Changes = append(r.Changes, Change{Slot: slot, Old: in.Assigned[slot]})
		}
	case c.Frozen:
		r.Rollout, r.Watched = in.Rollout, in.Watched
	default:
		d := newDecision(in)
		d.run()
		r = d.res
		d.release()
	}
	return r
}

// decision is the working state of one Decide.
type decision struct {
	in Input
	c  *Controller
	// r is the result being made: res, kept in the decision so that a
	// pooled decision makes it without allocating.
	r   *Result
	res Result
	// next are the assignments as the decision leaves them.
	next map[int]Assignment
	// live are the live containers of each slot, on any node (parts of
	// liveAll); held are the unassigned slots a node may still run a
	// container of.
	live    map[int][]Container
	liveAll []Container
	held    map[int]bool
	// taken are the slots this decision took off a node that is not lost.
	taken map[int]bool
	// mine counts the controller's slots in next per node of the input,
	// in its order, and used what they reserve there, and ports the host
	// ports they publish.
	mine  []int
	used  map[string]Resources
	ports map[string]map[string]bool
	// looked are where nodeAt has found nodes in the input, by name (-1:
	// not there): the few the
	// controller's slots are on, asked for again and again.
	looked map[string]int
	// stuck are the slots that must move but no other node can take.
	stuck []int
}

func newDecision(in Input) *decision {
	if !slices.IsSortedFunc(in.Nodes, byName) {
		in.Nodes = slices.SortedFunc(slices.Values(in.Nodes), byName)
	}
	d := decisions.Get().(*decision)
	d.in = in
	d.c, d.r = &d.in.Controller, &d.res
	maps.Copy(d.next, in.Assigned)
	d.mine = slices.Grow(d.mine, len(in.Nodes))[:len(in.Nodes)]
	d.groupLive()
	for _, a := range d.next {
		d.count(a.Node, 1)
	}
	d.findHeld()
	return d
}

// groupLive fills live with the live containers of each slot, in the
// input's order, as parts of one slice kept from decision to decision.
func (d *decision) groupLive() {
	for _, ct := range d.in.Containers {
		if ct.Live && ct.Slot > 0 && !d.expired(ct.Node) {
			d.liveAll = append(d.liveAll, ct)
		}
	}
	slices.SortStableFunc(d.liveAll, func(a, b Container) int { return cmp.Compare(a.Slot, b.Slot) })
	for i := 0; i < len(d.liveAll); {
		j := i + 1
		for j < len(d.liveAll) && d.liveAll[j].Slot == d.liveAll[i].Slot {
			j++
		}
		d.live[d.liveAll[i].Slot] = d.liveAll[i:j:j]
		i = j
	}
}

// decisions keeps the working state of finished decisions, emptied, for
// the next: the leader decides every controller each sync period, and a
// decision that changes nothing allocated 7 KB, most of it these maps.
var decisions = sync.Pool{New: func() any {
	return &decision{
		next: map[int]Assignment{}, live: map[int][]Container{}, held: map[int]bool{}, taken: map[int]bool{},
		used: map[string]Resources{}, ports: map[string]map[string]bool{}, looked: map[string]int{},
	}
}}

// release empties d and gives it back to the pool. Nothing of the result
// refers to d's maps or slices: what the result holds, it holds in its
// own.
func (d *decision) release() {
	d.in, d.c, d.r, d.res = Input{}, nil, nil, Result{}
	clear(d.liveAll)
	d.liveAll = d.liveAll[:0]
	clear(d.next)
	clear(d.live)
	clear(d.held)
	clear(d.taken)
	clear(d.used)
	clear(d.ports)
	clear(d.looked)
	clear(d.mine)
	d.mine, d.stuck = d.mine[:0], d.stuck[:0]
	decisions.Put(d)
}

// findHeld finds the unassigned slots that a node may still run: one it
// reports live, one it still reports as its own (it writes a slot into
// its report before it creates a container of it), and one this leader
// took off a node later than the reports are as of. A node gone past the
// grace holds nothing: its reports went with its lease, even when the
// watch has not told it yet.
func (d *decision) findHeld() {
	for slot := range d.live {
		d.held[slot] = true
	}
	for node, r := range d.in.Reports {
		if d.expired(node) {
			continue
		}
		for _, slot := range r.Slots {
			d.held[slot] = true
		}
	}
	for slot, rel := range d.in.Released {
		if d.in.ReportsRevision < rel.Rev && !d.lost(rel.Node) {
			d.held[slot] = true
		}
	}
}

// releasedRuns returns, for an unassigned slot taken off a node that is
// not lost (by this decision, or by a release the reports do not show
// applied yet), or that a node's report says it started a successor of
// next to an outdated container, that node and the most containers of
// the slot it may run.
func (d *decision) releasedRuns(slot int) (node string, most int, ok bool) {
	if d.assignedNow(slot) {
		return "", 0, false
	}
	if old, was := d.in.Assigned[slot]; was && d.taken[slot] {
		if d.settled(slot, old) {
			return old.Node, 1, true
		}
		return old.Node, d.inFlight(slot, old), true
	}
	rel, was := d.in.Released[slot]
	if !was || d.lost(rel.Node) || d.in.ReportsRevision >= rel.Rev && !d.in.Reports[rel.Node].Slots.Has(slot) {
		// no release of this leader's holds it: a node's report may
		// still say it started a successor next to an outdated container
		return d.startedFirstOn(slot)
	}
	// until its node's report lets the slot go, what the released
	// assignment may have started there may still run: reports as of the
	// release only say the node wrote none since
	most = max(1, rel.Live)
	if d.reportsStartedFirst(rel.Node, slot) {
		most = max(most, 2)
	}
	return rel.Node, most, true
}

// startedFirstOn returns the node whose report says it may run two
// containers of slot, a successor started first and the container it
// replaces, if one that is not expired does (the first by name, should
// two).
func (d *decision) startedFirstOn(slot int) (node string, most int, ok bool) {
	for name := range d.in.Reports {
		if d.reportsStartedFirst(name, slot) && !d.expired(name) && (!ok || name < node) {
			node, most, ok = name, 2, true
		}
	}
	return node, most, ok
}

// inFlight is how many containers of slot a's node may run for it until
// it reports the slot settled: what a's writes may have started, or two
// when its report says so.
func (d *decision) inFlight(slot int, a Assignment) int {
	n := a.inFlight()
	if d.reportsStartedFirst(a.Node, slot) {
		n = max(n, 2)
	}
	return n
}

// reportsStartedFirst reports whether node's report says it may run two
// containers of slot.
func (d *decision) reportsStartedFirst(node string, slot int) bool {
	r := d.in.Reports[node]
	return r.StartedFirst.Has(slot) && r.Slots.Has(slot)
}

// isHeld reports whether slot is unassigned and a node may still run a
// container of it.
func (d *decision) isHeld(slot int) bool {
	return !d.assignedNow(slot) && (d.held[slot] || d.taken[slot])
}

// heldSlots returns the slots isHeld reports, in order.
func (d *decision) heldSlots() []int {
	var out []int
	for slot := range d.held {
		if d.isHeld(slot) {
			out = append(out, slot)
		}
	}
	for slot := range d.taken {
		if !d.held[slot] && d.isHeld(slot) {
			out = append(out, slot)
		}
	}
	slices.Sort(out)
	return out
}

func (d *decision) assignedNow(slot int) bool {
	_, ok := d.next[slot]
	return ok
}

func byName(a, b Node) int { return cmp.Compare(a.Name, b.Name) }

// FindNode returns where the node called name is in nodes, which are in
// name order, or where it would go, and whether it is there.
func FindNode(nodes []Node, name string) (int, bool) {
	return slices.BinarySearchFunc(nodes, name, func(n Node, name string) int { return cmp.Compare(n.Name, name) })
}

// node returns the node of that name; nil for one the input does not
// hold.
func (d *decision) node(name string) *Node {
	if i := d.nodeAt(name); i >= 0 {
		return &d.in.Nodes[i]
	}
	return nil
}

// nodeAt returns where the node of that name is in the input; -1 for one
// it does not hold.
func (d *decision) nodeAt(name string) int {
	if i, ok := d.looked[name]; ok {
		return i
	}
	i, ok := FindNode(d.in.Nodes, name)
	if !ok {
		i = -1
	}
	d.looked[name] = i
	return i
}

// alive reports whether node is registered.
func (d *decision) alive(node string) bool {
	n := d.node(node)
	return n != nil && n.Alive
}

// lost reports whether node is gone past the grace period (or unknown).
func (d *decision) lost(node string) bool {
	n := d.node(node)
	return n == nil || !n.Alive && d.in.Now.Sub(n.GoneSince) >= d.in.Grace
}

// expired reports whether node is known and gone past the grace period:
// its lease is over, so are its reports, and the grace was the wait for
// its containers to stop. Unlike lost, a node the input does not hold is
// not expired: its registration may simply not have been seen yet.
func (d *decision) expired(node string) bool {
	n := d.node(node)
	return n != nil && !n.Alive && d.in.Now.Sub(n.GoneSince) >= d.in.Grace
}

func (d *decision) run() {
	d.rollout()
	lost := d.dropLostNodes()
	d.scaleDown()
	avail := d.availableCount()
	// a move stops first (a slot's name is on one node at a time), so it
	// takes one replica down even with maxUnavailable 0
	moved := d.moveOff(avail - d.stopFloor())
	budget := avail - moved - (d.c.Replicas - d.c.Unavailable)
	d.place(lost)
	d.reportStuck()
	d.replaceUnhealthy()
	if d.c.OnDelete {
		d.markOnDelete()
	} else if !d.c.Paused {
		d.roll(budget)
	}
}

// set records a change of slot's assignment; nil removes it.
func (d *decision) set(slot int, a *Assignment) {
	old, had := d.next[slot]
	if had {
		d.count(old.Node, -1)
		if (a == nil || a.Node != old.Node) && !d.lost(old.Node) {
			d.taken[slot] = true
		}
	}
	if a == nil {
		delete(d.next, slot)
	} else {
		a.StartedFirst = d.startedFirst(slot, *a)
		d.next[slot] = *a
		d.count(a.Node, 1)
	}
	d.r.Changes = append(d.r.Changes, Change{Slot: slot, Old: d.in.Assigned[slot], New: a})
	// one change per slot: a later one replaces an earlier one
	for i := 0; i < len(d.r.Changes)-1; i++ {
		if d.r.Changes[i].Slot == slot {
			d.r.Changes = slices.Delete(d.r.Changes, i, i+1)
			break
		}
	}
	if orig, ok := d.in.Assigned[slot]; a == nil && !ok || a != nil && ok && orig.same(*a) {
		d.r.Changes = d.r.Changes[:len(d.r.Changes)-1] // nothing changes after all
	}
}

// count adds n of the controller's slots to node.
func (d *decision) count(node string, n int) {
	mine := 0
	if i := d.nodeAt(node); i >= 0 {
		d.mine[i] += n
		mine = d.mine[i]
	}
	u := d.used[node]
	u.Memory += int64(n) * d.c.Reserve.Memory
	u.CPU += int64(n) * d.c.Reserve.CPU
	d.used[node] = u
	if len(d.c.Ports) == 0 {
		return
	}
	if d.ports[node] == nil {
		d.ports[node] = map[string]bool{}
	}
	for _, p := range d.c.Ports {
		d.ports[node][p] = mine > 0
	}
}

// fresh is a new assignment to node of the current template; while the
// rollout is paused, of the template most slots run (the newest on a tie),
// as Kubernetes scales the old ReplicaSet of a paused Deployment: a pause
// holds the rollout where it is, and a scale does not move it on.
func (d *decision) fresh(node string) *Assignment {
	a := &Assignment{Node: node, Revision: d.c.Revision, Hash: d.c.Hash, OnDelete: d.c.OnDelete}
	if !d.c.Paused || len(d.next) == 0 {
		return a
	}
	type template struct {
		rev  int64
		hash string
	}
	count := map[template]int{}
	for _, x := range d.next {
		count[template{x.Revision, x.Hash}]++
	}
	best := template{d.c.Revision, d.c.Hash}
	for t, n := range count {
		if n > count[best] || n == count[best] && t.rev > best.rev {
			best = t
		}
	}
	a.Revision, a.Hash = best.rev, best.hash
	return a
}

// dropLostNodes takes every slot off nodes gone past the grace period,
// and returns those slots, to place again at once: the node's reports
// went with its lease, and the grace is the wait for its containers.
// Slots of a node still within its grace stay; the decision is made
// again when the grace ends.
func (d *decision) dropLostNodes() []int {
	var lost []int
	for _, slot := range slices.Sorted(maps.Keys(d.next)) {
		node := d.next[slot].Node
		if !d.lost(node) {
			if n := d.node(node); !n.Alive {
				d.r.recheck(d.in.Grace - d.in.Now.Sub(n.GoneSince))
			}
			continue
		}
		d.set(slot, nil)
		lost = append(lost, slot)
	}
	return lost
}

// The worth of a slot, for a scale-down: a slot whose container is not
// live goes first, then one that is not ready, then one of an older
// template, then the highest.
const (
	worthMissing = iota
	worthNotReady
	worthOutdated
	worthReady
)

func (d *decision) worth(slot int) int {
	a := d.next[slot]
	ct, ok := d.assigned(slot)
	switch {
	case !ok:
		return worthMissing
	case !ct.Ready:
		return worthNotReady
	case a.Hash != d.c.Hash || ct.Hash != d.c.Hash:
		return worthOutdated
	}
	return worthReady
}

// assigned returns the live container that holds slot's name on its
// assigned node, whatever its template; for a slot whose successor starts
// first and is not reported yet, the old one renamed out for it, which
// serves meanwhile; none on a node that is gone.
func (d *decision) assigned(slot int) (Container, bool) {
	a, ok := d.next[slot]
	if !ok || !d.alive(a.Node) {
		return Container{}, false
	}
	var renamed *Container
	for i, ct := range d.live[slot] {
		switch {
		case ct.Node != a.Node:
		case ct.Named:
			return ct, true
		case a.StartFirst && renamed == nil:
			renamed = &d.live[slot][i]
		}
	}
	if renamed != nil {
		return *renamed, true
	}
	return Container{}, false
}

// scaleDown removes the least useful assignments above replicas.
func (d *decision) scaleDown() {
	extra := len(d.next) - d.c.Replicas
	if extra <= 0 {
		return
	}
	order := slices.Sorted(maps.Keys(d.next))
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(d.worth(a), d.worth(b)), cmp.Compare(b, a))
	})
	for _, slot := range order[:extra] {
		d.set(slot, nil)
	}
}

// available reports whether slot counts for the next step: a container
// of it on its assigned node has run ready for AvailableAfter, by the
// leader's clock and by its node's engine (Monitored), and the node is
// not about to stop it. It asks for a recheck when a container soon will
// have run long enough; the engine's word comes with a report, which
// wakes the leader.
func (d *decision) available(slot int) bool {
	return d.servesFor(slot, d.c.AvailableAfter, true)
}

// serving reports whether slot is available as the status counts it
// (ready for MinReady): taking it down costs availability.
func (d *decision) serving(slot int) bool {
	return d.servesFor(slot, d.c.MinReady, false)
}

// servesFor reports whether a container of slot on its assigned node has
// run ready for at least after, and is not about to be stopped; for a
// rollout's step, also by its node's engine. That container may be of an
// older template: one a successor is started first for serves until the
// successor does, and one kept under OnDelete serves on. One whose slot
// now has another template, stop first, is as good as gone.
//
// A report that has not changed since a container started does not say
// that it still runs: its node may not have seen it exit yet. So a
// rollout counts it only once the node has asked its engine at the
// window's end (Monitored); the leader's clock alone would let a step
// take down an old container while the new one has crashed unseen.
func (d *decision) servesFor(slot int, after time.Duration, rollout bool) bool {
	a, ok := d.next[slot]
	if !ok || !d.alive(a.Node) {
		return false
	}
	for _, ct := range d.live[slot] {
		if ct.Node != a.Node || !ct.Ready || doomed(ct, a) || ct.StartedAt.IsZero() {
			continue
		}
		// after 0 asks for ready only: a container that started after
		// the leader's clock reading (another host's clock, or a start
		// the leader's reading came before) serves as well
		ran := d.in.Now.Sub(ct.StartedAt)
		switch {
		case after <= 0:
			return true
		case ran < after:
			if rollout {
				d.r.recheck(after - ran)
			}
		case !rollout || ct.Monitored:
			return true
		}
	}
	return false
}

// doomed reports whether a's node is about to stop ct: a container of
// another template that holds the slot's name when the slot is to stop
// first (not under OnDelete), or an old one renamed out for a successor
// when the slot no longer starts first.
func doomed(ct Container, a Assignment) bool {
	if !ct.Named {
		return !a.StartFirst
	}
	return ct.Hash != a.Hash && !a.StartFirst && !a.OnDelete
}

// kept reports whether a's node keeps ct: it is neither about to stop it
// nor to replace it for ill health.
func kept(ct Container, a Assignment) bool {
	return !doomed(ct, a) && (a.Replace == "" || ct.ID != a.Replace)
}

func (d *decision) availableCount() int { return d.countSlots(d.available) }

// countSlots counts the slots for which is holds.
func (d *decision) countSlots(is func(slot int) bool) int {
	n := 0
	for slot := range d.next {
		if is(slot) {
			n++
		}
	}
	return n
}

// liveCount counts the controller's live containers over every node as
// they may be now, stale reports or not: per slot, what the reports show,
// or what the assignment makes certain to be there if that is more. An
// assigned slot has its container, or will any moment; one whose
// successor starts first may have the old one too, until a report shows
// the successor alone; one a node still holds may have one no report
// shows yet.
func (d *decision) liveCount() int {
	slots := make(map[int]bool, len(d.next)+len(d.live))
	for slot := range d.next {
		slots[slot] = true
	}
	for slot := range d.live {
		slots[slot] = true
	}
	for _, slot := range d.heldSlots() {
		slots[slot] = true
	}
	n := 0
	for slot := range slots {
		a, assigned := d.next[slot]
		onNode, elsewhere := 0, 0
		for _, ct := range d.live[slot] {
			if assigned && ct.Node == a.Node {
				onNode++
			} else {
				elsewhere++
			}
		}
		expected := 0
		switch {
		case !assigned:
			if node, most, ok := d.releasedRuns(slot); ok {
				// off its node, what the assignment may have started
				// there runs until its node reports it gone
				on := 0
				for _, ct := range d.live[slot] {
					if ct.Node == node {
						on++
					}
				}
				n += max(on, most) + elsewhere - on
				continue
			}
			if d.isHeld(slot) && elsewhere == 0 {
				expected = 1
			}
		case !d.settled(slot, a):
			expected = d.inFlight(slot, a)
		default:
			expected = 1
		}
		n += max(onNode, expected) + elsewhere
	}
	return n
}

// settled reports whether a's node is known to run a's container of slot
// and nothing else of it: no start-first step, of a or of a write before
// it, may have a second container there.
func (d *decision) settled(slot int, a Assignment) bool {
	if d.reportsStartedFirst(a.Node, slot) {
		return false
	}
	if !a.StartFirst && a.StartedFirst == 0 {
		return true
	}
	onNode := 0
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node {
			onNode++
		}
	}
	return onNode == 1 && d.reportsAssigned(slot, a)
}

// startedFirst is the StartedFirst of a, written over slot's assignment:
// the start-first steps of the assignment it replaces on the same node
// that its node has not reported settled are carried over, so that a
// rewrite never forgets a container a step may have started.
func (d *decision) startedFirst(slot int, a Assignment) int {
	orig, ok := d.in.Assigned[slot]
	switch {
	case !ok || orig.Node != a.Node || d.settled(slot, orig):
		return 0
	case a.same(orig): // nothing else changes: nothing new is in flight
		return orig.StartedFirst
	case orig.StartFirst:
		return orig.StartedFirst + 1
	default:
		return orig.StartedFirst
	}
}

// reportsAssigned reports whether a live container of a's template holds
// slot's name on a's node.
func (d *decision) reportsAssigned(slot int, a Assignment) bool {
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node && ct.Named && ct.Hash == a.Hash {
			return true
		}
	}
	return false
}

// moveOff takes the slots whose node can no longer run them off it: the
// first phase of a move. Moves are paced: an available slot moves only
// within budget, and a running one only while the slots that run stay at
// replicas - max(1, maxUnavailable) or more, so that a move of containers
// not ready yet does not take them all down at once either. A slot its
// node holds in its report runs as far as the move is concerned: the node
// writes it there before it creates its container, so a container just
// created may run before a report shows it. A slot of which nothing runs
// or may run moves at once. It returns how many available ones it took
// off.
func (d *decision) moveOff(budget int) (moved int) {
	var moving []int
	why := map[int]string{}
	for slot, a := range d.next {
		n := d.node(a.Node)
		if n == nil || !n.Alive {
			continue // within its grace
		}
		switch {
		case n.Availability == api.NodeDrain:
			why[slot] = MoveDrain
		case !matches(d.c.Selector, n.Labels) && a.Revision != d.c.Revision:
			why[slot] = MoveSelector
		case !matches(d.c.Selector, n.Labels):
			why[slot] = MoveLabels
		case d.in.Blocked[slot][n.Name]:
			why[slot] = MoveBlocked
		default:
			continue
		}
		moving = append(moving, slot)
	}
	if len(moving) == 0 {
		return 0
	}
	d.rank(moving)
	// what may run and what surely runs, above the floor of replicas -
	// max(1, maxUnavailable): a slot that surely runs moves only while
	// as many others surely run, and one its node may run (it holds the
	// slot; no report shows it running yet) only while as many others
	// may. A node claims a slot before it creates its container, and a
	// create may take seconds: a claim on the destination of an earlier
	// move does not stand in for a container that runs.
	floor := d.stopFloor()
	mays, runs := d.countSlots(d.mayRun)-floor, d.surelyRunning()-floor
	for _, slot := range moving {
		if why[slot] != MoveBlocked && d.pick(slot) == "" {
			// no other node can take it: it stays where it is, and the
			// status says what is missing (a slot whose name is taken
			// goes: another number takes its place)
			d.stuck = append(d.stuck, slot)
			continue
		}
		serves, may, sure := d.serving(slot), d.mayRun(slot), d.runsNow(slot)
		if serves && moved >= budget || may && mays <= 0 || sure && runs <= 0 {
			continue
		}
		if serves {
			moved++
		}
		if may {
			mays--
		}
		if sure {
			runs--
		}
		d.r.Moves = append(d.r.Moves, Move{Slot: slot, Node: d.next[slot].Node, Reason: why[slot]})
		d.set(slot, nil)
	}
	return moved
}

// runsReported reports whether a report shows a live container of slot on
// its assigned node.
func (d *decision) runsReported(slot int) bool {
	a := d.next[slot]
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node && ct.Live {
			return true
		}
	}
	return false
}

// runsNow reports whether a report shows a container of slot running on
// its assigned node, one the node keeps (it is neither about to stop it
// nor replacing it).
func (d *decision) runsNow(slot int) bool {
	a := d.next[slot]
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node && ct.Running && kept(ct, a) {
			return true
		}
	}
	return false
}

// stopFloor is replicas - max(1, maxUnavailable): what a stop first
// (a move, a rollout step) keeps, since it takes one down even with
// maxUnavailable 0.
func (d *decision) stopFloor() int { return d.c.Replicas - max(d.c.Unavailable, 1) }

// surelyRunning counts the slots a report shows running (runsNow).
func (d *decision) surelyRunning() int { return d.countSlots(d.runsNow) }

// mayRun reports whether slot's assigned node may run it: a report shows
// a live container of it there, or the node's report holds the slot.
func (d *decision) mayRun(slot int) bool {
	return d.runsReported(slot) || d.in.Reports[d.next[slot].Node].Slots.Has(slot)
}

// rank orders slots for taking away: not serving first, then the
// highest.
func (d *decision) rank(slots []int) {
	avail := make(map[int]bool, len(slots))
	for _, s := range slots {
		avail[s] = d.serving(s)
	}
	slices.SortFunc(slots, func(a, b int) int {
		if avail[a] != avail[b] {
			if avail[a] {
				return 1
			}
			return -1
		}
		return cmp.Compare(b, a)
	})
}

// place assigns the slots the controller lacks: first the lost ones,
// then the ones whose move waits for their old container to go (once it
// has), then the lowest free numbers.
func (d *decision) place(lost []int) {
	need := d.c.Replicas - len(d.next)
	if need <= 0 {
		return
	}
	// a new slot is one more live container: within replicas + maxSurge,
	// counting a surge step in flight, which cannot be taken back
	room := d.c.Replicas + d.c.Surge - d.liveCount()
	var failed []int
	try := func(slot int) {
		if room <= 0 {
			need = 0 // the rest once the surge step is done
			return
		}
		if n := d.pick(slot); n != "" {
			room--
			d.set(slot, d.fresh(n))
		} else {
			failed = append(failed, slot)
		}
		need--
	}
	for _, slot := range lost {
		if need == 0 {
			break
		}
		try(slot)
	}
	// slots a node still holds but no longer has assigned (moving, or
	// scaled down): the lowest ones wait to be placed again once let go
	for _, slot := range d.heldSlots() {
		if need == 0 {
			break
		}
		if !slices.Contains(lost, slot) && !slices.Contains(failed, slot) {
			need-- // waits for the node to let it go
		}
	}
	for slot := 1; need > 0; slot++ {
		if d.assignedNow(slot) || d.isHeld(slot) || slices.Contains(lost, slot) || slices.Contains(failed, slot) {
			continue
		}
		if d.takenEverywhere(slot) {
			continue // the next number
		}
		try(slot)
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		d.r.Unschedulable = failed
		d.r.Reason = d.whyUnschedulable()
	}
}

// reportStuck adds the slots that must move but that no other node can
// take to the unschedulable ones.
func (d *decision) reportStuck() {
	if len(d.stuck) == 0 {
		return
	}
	d.r.Unschedulable = append(d.r.Unschedulable, d.stuck...)
	slices.Sort(d.r.Unschedulable)
	d.r.Unschedulable = slices.Compact(d.r.Unschedulable)
	if d.r.Reason == "" {
		d.r.Reason = d.whyUnschedulable()
	}
}

// takenEverywhere reports whether every live node that matches the
// selector has slot's name taken by a container outside the set.
func (d *decision) takenEverywhere(slot int) bool {
	matched := false
	for i := range d.in.Nodes {
		n := &d.in.Nodes[i]
		if !n.Alive || !n.open() || !matches(d.c.Selector, n.Labels) {
			continue
		}
		matched = true
		if !d.in.Blocked[slot][n.Name] {
			return false
		}
	}
	return matched
}

// pick returns the node for slot: alive, matching the selector, with the
// slot's name free and room for the task; the one with the fewest of the
// controller's slots, then the fewest in all, then the first by name.
// "" when none fits.
func (d *decision) pick(slot int) string {
	best, bestMine, bestSlots := "", 0, 0
	blocked := d.in.Blocked[slot]
	for i := range d.in.Nodes {
		n := &d.in.Nodes[i]
		mine := d.mine[i]
		better := best == "" || mine < bestMine || mine == bestMine && n.Slots+mine < bestSlots
		// whether it fits is asked only of a node that would win: over
		// nodes in random order of load, a few of a hundred
		if !better || blocked[n.Name] || !d.fits(n) {
			continue
		}
		best, bestMine, bestSlots = n.Name, mine, n.Slots+mine
	}
	return best
}

// markOnDelete gives every slot the current template at once, marked
// OnDelete: the nodes use it only for replacements.
func (d *decision) markOnDelete() {
	for _, slot := range slices.Sorted(maps.Keys(d.next)) {
		if a := d.next[slot]; a.Hash != d.c.Hash || !a.OnDelete {
			na := a
			na.Revision, na.Hash, na.OnDelete, na.StartFirst = d.c.Revision, d.c.Hash, true, false
			d.set(slot, &na)
		}
	}
}

// roll gives outdated slots the current template: one of which nothing
// runs at once (stop first), otherwise start first while the surge leaves
// room for one more live container, else stop first within three bounds:
// budget (available ones above replicas - maxUnavailable) for one that
// serves, scaleDown (live ones above that) for any, and runs (those that
// surely run above replicas - max(1, maxUnavailable)) for one that runs.
func (d *decision) roll(budget int) {
	var outdated []int
	for slot, a := range d.next {
		// an OnDelete mark is outdated too: it kept the containers of
		// older templates, which RollingUpdate replaces
		if a.Hash != d.c.Hash || a.OnDelete {
			outdated = append(outdated, slot)
		}
	}
	if len(outdated) == 0 {
		return
	}
	// room for a surge, keeping room for the slots not placed yet: they
	// will be, and a surge in flight cannot be taken back
	unplaced := max(0, d.c.Replicas-len(d.next)-len(d.heldSlots()))
	room := d.c.Replicas + d.c.Surge - d.liveCount() - unplaced
	// how many may go at all, as Kubernetes counts it: the slots that run
	// or are about to, less replicas - maxUnavailable, less the new ones
	// not available yet; so that containers that merely are not available
	// yet (minReadySeconds) do not all go at once. A slot whose container
	// is being stopped (a stop-first step in flight, of any template) or
	// replaced for ill health is down already, and counts for nothing.
	scaleDown := -(d.c.Replicas - d.c.Unavailable)
	for slot, a := range d.next {
		if d.stoppingFirst(slot) || d.replacing(slot, a) {
			continue
		}
		if d.running(slot) {
			scaleDown++
		}
		if a.Hash == d.c.Hash && !d.available(slot) {
			scaleDown--
		}
	}
	// scaleDown counts a slot that may run (its node has not reported a
	// container of it yet) as running, so that slots whose creates fail
	// are replaced too; runs counts only the slots a report shows running,
	// above replicas - max(1, maxUnavailable), and a slot that surely
	// runs is stopped only while as many others surely run: a claim, or a
	// create not reported yet, is no running container (as for a move)
	runs := d.surelyRunning() - d.stopFloor()
	d.rank(outdated)
	for _, slot := range outdated {
		a := d.next[slot]
		na := a
		na.Revision, na.Hash, na.OnDelete, na.StartFirst = d.c.Revision, d.c.Hash, false, false
		sure := d.runsNow(slot)
		switch {
		case !d.running(slot) || d.replacing(slot, a):
			// nothing of it runs, or what runs is being replaced for ill
			// health: replacing it takes nothing more down
		case a.Hash == d.c.Hash && !d.runsOlder(slot, a.Node):
			// an OnDelete mark over a container of the current template:
			// dropping it replaces nothing
		case d.stoppingFirst(slot):
			// its old container is being stopped for a successor already:
			// a start-first step could not take that back, and stop first
			// takes nothing more down
		case room > 0 && len(d.c.Ports) == 0:
			// start first; not with a host port, which the successor on
			// the same node could not bind while the old one holds it
			na.StartFirst = true
			room--
		case sure && runs <= 0:
			continue
		case d.serving(slot) && budget > 0 && scaleDown > 0:
			budget--
			scaleDown--
			runs--
		case !d.serving(slot) && scaleDown > 0:
			scaleDown--
			if sure {
				runs--
			}
		default:
			continue
		}
		d.set(slot, &na)
		d.r.Steps++
	}
}

// stoppingFirst reports whether slot's assignment, as read, replaces its
// container stop first and its node still reports the old one: the stop
// may be under way.
func (d *decision) stoppingFirst(slot int) bool {
	a, ok := d.in.Assigned[slot]
	if !ok || a.StartFirst || a.OnDelete {
		return false
	}
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node && ct.Named && ct.Hash != a.Hash {
			return true
		}
	}
	return false
}

// runsOlder reports whether a report shows a live container of slot on
// node of another template than the current one.
func (d *decision) runsOlder(slot int, node string) bool {
	for _, ct := range d.live[slot] {
		if ct.Node == node && ct.Hash != d.c.Hash {
			return true
		}
	}
	return false
}

// running reports whether slot may have a live container on its node: one
// is reported there, or its assigned container is not reported yet (in
// flight, or a report that is late).
func (d *decision) running(slot int) bool {
	a := d.next[slot]
	if d.lost(a.Node) {
		return false // gone past its grace: its containers are stopped
	}
	// a node within its grace, or not seen registered yet (a leader just
	// started, a node's manager restarting), may run the slot whatever its
	// report says, or with no report at all: it counts as running, so its
	// slot is not replaced as if nothing ran
	if !d.reportsAssigned(slot, a) {
		return true
	}
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node {
			return true
		}
	}
	return false
}

// matches reports whether a node's labels satisfy a nodeSelector; an
// empty one allows every node.
func matches(selector, labels map[string]string) bool {
	return len(selector) == 0 || api.SelectorMatches(selector, labels)
}
