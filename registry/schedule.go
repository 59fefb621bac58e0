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
}

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
	res := scheduleResult{unschedulable: map[string]unschedulable{}}
	loads := make(map[string]*nodeLoad, len(in.nodes))
	names := slices.Sorted(maps.Keys(in.nodes))
	for _, name := range names {
		n := in.nodes[name]
		loads[name] = &nodeLoad{node: n}
		if !n.alive {
			if wait := in.grace - in.now.Sub(n.goneSince); wait > 0 && (res.recheckAfter == 0 || wait < res.recheckAfter) {
				res.recheckAfter = wait
			}
		}
	}

	// Pass 1: keep what is still good, drop what is not, so that the
	// loads count every kept slot before anything new is placed.
	known := make(map[string]bool, len(in.controllers))
	open := make(map[string][]int, len(in.controllers)) // slots to place, by controller
	for i := range in.controllers {
		c := &in.controllers[i]
		known[c.id] = true
		current := in.assignments[c.id]
		for _, slot := range slices.Sorted(maps.Keys(current)) {
			a := current[slot]
			switch {
			case c.frozen:
				countOn(loads, a.node, c, 0)
			case slot > c.replicas:
				res.changes = append(res.changes, assignChange{id: c.id, slot: slot, old: a})
			case keeps(loads[a.node], c, in):
				countOn(loads, a.node, c, slot)
			default:
				open[c.id] = append(open[c.id], slot)
			}
		}
		if c.frozen {
			continue
		}
		for slot := 1; slot <= c.replicas; slot++ {
			if _, ok := current[slot]; !ok {
				open[c.id] = append(open[c.id], slot)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(in.assignments)) {
		if known[id] {
			continue
		}
		for _, slot := range slices.Sorted(maps.Keys(in.assignments[id])) {
			res.changes = append(res.changes, assignChange{id: id, slot: slot, old: in.assignments[id][slot]})
		}
	}

	// Pass 2: place the open slots, controller by controller.
	alive := make([]*nodeLoad, 0, len(loads))
	for _, name := range names {
		if l := loads[name]; l.node.alive {
			alive = append(alive, l)
		}
	}
	for i := range in.controllers {
		c := &in.controllers[i]
		slots := open[c.id]
		if len(slots) == 0 {
			continue
		}
		slices.Sort(slots)
		mine := make(map[string]int, len(alive)) // this controller's slots per node
		for slot, a := range in.assignments[c.id] {
			if slot <= c.replicas && !slices.Contains(slots, slot) {
				mine[a.node]++
			}
		}
		var failed []int
		for _, slot := range slots {
			best := pick(alive, c, mine)
			if best == nil {
				failed = append(failed, slot)
				continue
			}
			mine[best.node.name]++
			countOn(loads, best.node.name, c, slot)
			res.changes = append(res.changes, assignChange{id: c.id, slot: slot, old: in.assignments[c.id][slot], node: best.node.name})
		}
		for _, slot := range failed {
			// a slot that was assigned somewhere no longer good, and fits
			// nowhere now, loses its assignment: its node must not keep it
			if old, ok := in.assignments[c.id][slot]; ok {
				res.changes = append(res.changes, assignChange{id: c.id, slot: slot, old: old})
			}
		}
		if len(failed) > 0 {
			res.unschedulable[c.id] = unschedulable{slots: failed, reason: whyUnschedulable(alive, c)}
		}
	}
	return res
}

// keeps reports whether an assignment to the node of l stays: the node
// matches the selector, is alive or within its grace, and publishes none
// of the controller's host ports yet.
func keeps(l *nodeLoad, c *schedController, in scheduleInput) bool {
	if l == nil || !nodeMatches(c.selector, l.node.labels) {
		return false
	}
	if !l.node.alive && in.now.Sub(l.node.goneSince) >= in.grace {
		return false
	}
	return freePorts(l, c)
}

// pick returns the node a new slot of c goes to: a live one that matches
// the selector and has c's host ports free, with the fewest slots of c,
// then the fewest in all, then the first by name; nil when none fits.
func pick(alive []*nodeLoad, c *schedController, mine map[string]int) *nodeLoad {
	var best *nodeLoad
	for _, l := range alive {
		if !nodeMatches(c.selector, l.node.labels) || !freePorts(l, c) {
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
