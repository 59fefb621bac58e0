package registry

// This file decides where slots run (DESIGN.md section 8). schedule is a
// pure function, as plan is: from the controllers, the nodes and the
// current assignments it returns the assignments to write and the slots no
// node can take. It keeps every assignment that is still good, so that a
// pass over a steady registry writes nothing, and places the rest over the
// nodes that match the controller's nodeSelector: fewest of this
// controller first, then fewest containers, then by name. Two slots that
// publish the same host port never go to one node, as the 2014 scheduler's
// port check ensured.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// schedController is what placement needs of one controller.
type schedController struct {
	id       string
	replicas int
	// selector is the nodeSelector.
	selector map[string]string
	// ports are the host ports its containers publish, as "8080/TCP".
	ports []string
	// frozen: the spec cannot be acted on (invalid); its assignments are
	// left as they are, so that a bad edit moves no container.
	frozen bool
	// blocked are, per slot, the nodes on which a container outside the
	// set holds the slot's name (the nodes report them).
	blocked map[int]map[string]bool
	// worth ranks the slots' containers as the nodes report them, for a
	// scale-down: slotReady above slotOutdated above slotNotReady; a slot
	// without one (not reported, not created yet) goes first.
	worth map[int]int
	// maxMoving is how many slots may be unavailable at once while slots
	// move off nodes that no longer match the selector (an update's
	// maxUnavailable, at least 1: a move stops the old container first).
	maxMoving int
}

// The worth of a slot's container, for a scale-down (DESIGN.md section 5):
// a container that is not running goes first, then one that is not ready,
// then one of an older template, then the highest slot.
const (
	slotMissing = iota
	slotNotReady
	slotOutdated
	slotReady
)

// schedNode is a node as placement sees it.
type schedNode struct {
	name   string
	labels map[string]string
	// alive: the node is registered (its lease lives). A node that is not
	// keeps its slots until it has been gone for the grace period.
	alive     bool
	goneSince time.Time
}

// slotAssignment is one assignment key: the node, and the key's
// ModRevision that a change must compare (0: no key).
type slotAssignment struct {
	node string
	rev  int64
}

// assignChange is one write of a pass: slot of id goes from old to node
// (node "" deletes the assignment).
type assignChange struct {
	id   string
	slot int
	old  slotAssignment
	node string
}

type scheduleInput struct {
	// controllers in id order.
	controllers []schedController
	nodes       map[string]*schedNode
	// assignments by controller id and slot; controllers not among
	// controllers are gone and lose theirs.
	assignments map[string]map[int]slotAssignment
	now         time.Time
	grace       time.Duration
}

// unschedulable is why some slots of a controller have no node.
type unschedulable struct {
	slots  []int
	reason string
}

type scheduleResult struct {
	changes       []assignChange
	unschedulable map[string]unschedulable
	// waiting are the controllers with slots left on nodes that no longer
	// match their selector, to move once the moved ones are available.
	waiting map[string]bool
	// recheckAfter is when a gone node's grace ends, so that its slots
	// move then; 0 when none is waiting.
	recheckAfter time.Duration
}

// nodeLoad is what a pass has placed on a node so far.
type nodeLoad struct {
	node  *schedNode
	total int
	// ports are the host ports published on the node, and by whom.
	ports map[string]string
}

// schedule decides one pass.
func schedule(in scheduleInput) scheduleResult {
	res := scheduleResult{unschedulable: map[string]unschedulable{}, waiting: map[string]bool{}}
	loads := make(map[string]*nodeLoad, len(in.nodes))
	names := slices.Sorted(maps.Keys(in.nodes))
	alive := make([]*nodeLoad, 0, len(names))
	for _, name := range names {
		n := in.nodes[name]
		l := &nodeLoad{node: n}
		loads[name] = l
		if n.alive {
			alive = append(alive, l)
			continue
		}
		if wait := in.grace - in.now.Sub(n.goneSince); wait > 0 && (res.recheckAfter == 0 || wait < res.recheckAfter) {
			res.recheckAfter = wait
		}
	}

	// Pass 1: keep what is still good and drop what is not, so that the
	// loads count every kept slot before anything new is placed.
	plans := make([]slotPlan, len(in.controllers))
	known := make(map[string]bool, len(in.controllers))
	for i := range in.controllers {
		c := &in.controllers[i]
		known[c.id] = true
		plans[i] = keepGood(c, in, loads, &res)
	}
	for _, id := range slices.Sorted(maps.Keys(in.assignments)) {
		if known[id] {
			continue
		}
		for _, slot := range slices.Sorted(maps.Keys(in.assignments[id])) {
			res.changes = append(res.changes, assignChange{id: id, slot: slot, old: in.assignments[id][slot]})
		}
	}

	// Pass 2: place the rest, controller by controller.
	for i := range in.controllers {
		if p := &plans[i]; len(p.moving) > 0 || p.need > 0 {
			place(&in.controllers[i], in, p, alive, loads, &res)
		}
	}
	return res
}

// slotPlan is what pass 1 leaves of one controller.
type slotPlan struct {
	// taken are its slot numbers that stay in use, kept or moving.
	taken map[int]bool
	// mine counts its kept slots per node.
	mine map[string]int
	// moving are assigned slots whose node can no longer keep them.
	moving []int
	// need is how many slot numbers it lacks.
	need int
}

// keepGood keeps c's assignments that are still good: it drops the highest
// slots above replicas (a scale-down), and lists the slots whose node can
// no longer run them.
func keepGood(c *schedController, in scheduleInput, loads map[string]*nodeLoad, res *scheduleResult) slotPlan {
	current := in.assignments[c.id]
	slots := slices.Sorted(maps.Keys(current))
	p := slotPlan{taken: make(map[int]bool, len(slots)), mine: make(map[string]int)}
	if c.frozen {
		for _, slot := range slots {
			countOn(loads, current[slot].node, c, slot)
		}
		return p
	}
	if len(slots) > c.replicas {
		order := slices.Clone(slots)
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(c.worth[a], c.worth[b]), cmp.Compare(b, a))
		})
		for _, slot := range order[:len(slots)-c.replicas] {
			res.changes = append(res.changes, assignChange{id: c.id, slot: slot, old: current[slot]})
		}
		slots = slices.Sorted(slices.Values(order[len(slots)-c.replicas:]))
	}
	// slots off a live node that no longer matches the selector move
	// within the bounds of an update, counting those not available yet
	budget := max(c.maxMoving, 1) - (c.replicas - len(slots))
	for _, slot := range slots {
		if c.worth != nil && c.worth[slot] < slotOutdated {
			budget--
		}
	}
	for _, slot := range slots {
		p.taken[slot] = true
		a := current[slot]
		l := loads[a.node]
		switch {
		case keeps(l, c, slot, in):
		case movedBySelector(l, c, slot) && budget <= 0:
			res.waiting[c.id] = true // stays where it is for now
		default:
			if movedBySelector(l, c, slot) {
				budget--
			}
			p.moving = append(p.moving, slot)
			continue
		}
		countOn(loads, a.node, c, slot)
		p.mine[a.node]++
	}
	p.need = c.replicas - len(slots)
	return p
}

// movedBySelector reports whether slot leaves its node only because the
// node no longer matches the selector: the node is alive, and would
// otherwise keep it.
func movedBySelector(l *nodeLoad, c *schedController, slot int) bool {
	return l != nil && l.node.alive && !nodeMatches(c.selector, l.node.labels) &&
		!c.blocked[slot][l.node.name] && freePorts(l, c)
}

// place finds nodes for c's moving slots, and slot numbers and nodes for
// the ones it lacks: the lowest free numbers, skipping a number whose name
// every node that could run it has taken by a container outside the set.
func place(c *schedController, in scheduleInput, p *slotPlan, alive []*nodeLoad, loads map[string]*nodeLoad, res *scheduleResult) {
	current := in.assignments[c.id]
	var failed []int
	assign := func(slot int) bool {
		best := pick(alive, c, p.mine, slot)
		if best == nil {
			return false
		}
		p.mine[best.node.name]++
		countOn(loads, best.node.name, c, slot)
		res.changes = append(res.changes, assignChange{id: c.id, slot: slot, old: current[slot], node: best.node.name})
		return true
	}
	for _, slot := range p.moving {
		if assign(slot) {
			continue
		}
		// its node must not keep it: the slot loses its assignment
		res.changes = append(res.changes, assignChange{id: c.id, slot: slot, old: current[slot]})
		if nameTakenEverywhere(alive, c, slot) {
			delete(p.taken, slot)
			p.need++ // under another number
		} else {
			failed = append(failed, slot)
		}
	}
	for slot := 1; p.need > 0; slot++ {
		if p.taken[slot] {
			continue
		}
		switch {
		case assign(slot):
		case nameTakenEverywhere(alive, c, slot):
			continue // the next number
		default:
			failed = append(failed, slot)
		}
		p.taken[slot] = true
		p.need--
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		res.unschedulable[c.id] = unschedulable{slots: failed, reason: whyUnschedulable(alive, c)}
	}
}

// nameTakenEverywhere reports whether every live node that matches c's
// selector has slot's name taken by a container outside c's set.
func nameTakenEverywhere(alive []*nodeLoad, c *schedController, slot int) bool {
	matched := false
	for _, l := range alive {
		if !nodeMatches(c.selector, l.node.labels) {
			continue
		}
		matched = true
		if !c.blocked[slot][l.node.name] {
			return false
		}
	}
	return matched
}

// keeps reports whether slot's assignment to the node of l stays: the
// node matches the selector, is alive or within its grace, has the slot's
// name free and publishes none of the controller's host ports yet.
func keeps(l *nodeLoad, c *schedController, slot int, in scheduleInput) bool {
	if l == nil || !nodeMatches(c.selector, l.node.labels) || c.blocked[slot][l.node.name] {
		return false
	}
	if !l.node.alive && in.now.Sub(l.node.goneSince) >= in.grace {
		return false
	}
	return freePorts(l, c)
}

// pick returns the node slot of c goes to: a live one that matches the
// selector, has the slot's name and c's host ports free, with the fewest
// slots of c, then the fewest in all, then the first by name; nil when
// none fits.
func pick(alive []*nodeLoad, c *schedController, mine map[string]int, slot int) *nodeLoad {
	var best *nodeLoad
	for _, l := range alive {
		if !nodeMatches(c.selector, l.node.labels) || !freePorts(l, c) || c.blocked[slot][l.node.name] {
			continue
		}
		if best == nil || mine[l.node.name] < mine[best.node.name] ||
			mine[l.node.name] == mine[best.node.name] && l.total < best.total {
			best = l
		}
	}
	return best
}

func freePorts(l *nodeLoad, c *schedController) bool {
	for _, p := range c.ports {
		if _, taken := l.ports[p]; taken {
			return false
		}
	}
	return true
}

// countOn adds a slot of c to the node's load; a node placement does not
// know (an assignment to a node never registered) gets one that is gone.
func countOn(loads map[string]*nodeLoad, node string, c *schedController, slot int) {
	l := loads[node]
	if l == nil {
		return
	}
	l.total++
	if len(c.ports) == 0 {
		return
	}
	if l.ports == nil {
		l.ports = make(map[string]string)
	}
	for _, p := range c.ports {
		l.ports[p] = fmt.Sprintf("%s slot %d", c.id, slot)
	}
}

// whyUnschedulable names what is missing for c's open slots.
func whyUnschedulable(alive []*nodeLoad, c *schedController) string {
	if len(alive) == 0 {
		return "no node is registered"
	}
	var matching []string
	for _, l := range alive {
		if nodeMatches(c.selector, l.node.labels) {
			matching = append(matching, l.node.name)
		}
	}
	if len(matching) == 0 {
		return fmt.Sprintf("no node matches nodeSelector %s (%d node(s) registered)", api.FormatLabels(c.selector), len(alive))
	}
	return fmt.Sprintf("host port(s) %s already published on every node that can run it (%s)",
		strings.Join(c.ports, ", "), strings.Join(matching, ", "))
}

// nodeMatches reports whether a node's labels satisfy a nodeSelector; an
// empty one allows every node.
func nodeMatches(selector, labels map[string]string) bool {
	return len(selector) == 0 || api.SelectorMatches(selector, labels)
}

// hostPorts returns the host ports a template publishes, as "8080/TCP".
func hostPorts(t *api.TaskTemplate) []string {
	var out []string
	for _, c := range t.DesiredState.Manifest.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				proto := strings.ToUpper(p.Protocol)
				if proto == "" {
					proto = "TCP"
				}
				out = append(out, fmt.Sprintf("%d/%s", p.HostPort, proto))
			}
		}
	}
	return out
}
