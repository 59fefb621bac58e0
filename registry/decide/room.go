package decide

// This file is the room a node has for a task: it takes new slots (it is
// neither paused nor drained), its labels match the
// selector, none of the task's host ports is published there yet, and
// the memory and CPU the task reserves fit in what the node registered,
// less what its assigned slots already reserve.

import (
	"fmt"
	"strings"

	"github.com/docker/go-units"

	"github.com/replication-manager/replication-manager/api"
)

// fits reports whether node n can take one more slot of the controller:
// unfit's answer without its words, for the loop over every node that
// each placement makes.
func (d *decision) fits(n *Node) bool {
	if !n.Alive || !n.open() || !matches(d.c.Selector, n.Labels) {
		return false
	}
	if len(d.c.Ports) == 0 && d.c.Reserve.Memory <= 0 && d.c.Reserve.CPU <= 0 {
		return true
	}
	return d.unfit(n) == ""
}

// unfit says why node n cannot take one more slot of the controller; ""
// when it can.
func (d *decision) unfit(n *Node) string {
	switch {
	case !n.Alive:
		return "not registered"
	case n.Availability == api.NodePause:
		return "paused (cordoned)"
	case n.Availability == api.NodeDrain:
		return "draining"
	case !matches(d.c.Selector, n.Labels):
		return "does not match the nodeSelector"
	}
	for _, p := range d.c.Ports {
		if n.Ports[p] || d.ports[n.Name][p] {
			return "host port " + p + " is taken"
		}
	}
	used := d.used[n.Name]
	if need, free := d.c.Reserve.Memory, n.Capacity.Memory-n.Used.Memory-used.Memory; need > 0 && n.Capacity.Memory > 0 && need > free {
		return fmt.Sprintf("memory: needs %s, %s free of %s", units.BytesSize(float64(need)), units.BytesSize(float64(max(free, 0))), units.BytesSize(float64(n.Capacity.Memory)))
	}
	if need, free := d.c.Reserve.CPU, n.Capacity.CPU-n.Used.CPU-used.CPU; need > 0 && n.Capacity.CPU > 0 && need > free {
		// cpu is a request that placement reserves, as in Kubernetes, not
		// a limit: say so, or "needs 512" reads as more than a machine of
		// 2 CPUs has
		return fmt.Sprintf("cpu: needs %d shares (a reservation: 1024 = one CPU), %d free of %d", need, max(free, 0), n.Capacity.CPU)
	}
	return ""
}

// whyUnschedulable names what is missing for the slots no node takes.
func (d *decision) whyUnschedulable() string {
	var alive, matching []*Node
	var closed []string
	for i := range d.in.Nodes {
		n := &d.in.Nodes[i]
		if !n.Alive {
			continue
		}
		alive = append(alive, n)
		switch {
		case !matches(d.c.Selector, n.Labels):
		case !n.open():
			closed = append(closed, n.Name+": "+d.unfit(n))
		default:
			matching = append(matching, n)
		}
	}
	switch {
	case len(alive) == 0:
		return "no node is registered"
	case len(matching) == 0 && len(closed) == 0:
		return fmt.Sprintf("no node matches nodeSelector %s (%d node(s) registered)", api.FormatLabels(d.c.Selector), len(alive))
	case len(matching) == 0:
		return "no node that matches takes new slots (" + strings.Join(closed, "; ") + ")"
	}
	why := make([]string, 0, len(matching)+len(closed))
	for _, n := range matching {
		reason := d.unfit(n)
		if reason == "" {
			reason = "the slot's name is taken by a container outside the set"
		}
		why = append(why, n.Name+": "+reason)
	}
	return "no node has room (" + strings.Join(append(why, closed...), "; ") + ")"
}
