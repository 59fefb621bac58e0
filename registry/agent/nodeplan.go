package agent

// This file is the node's part of the plan: it runs exactly the slots the
// leader assigned to it, each with its assigned template, and no more. It
// creates a slot's container when there is none, replaces one of another
// template (stop first, or start first when the assignment says so, the
// old one renamed out of the slot's name until its successor is
// available, or until the slot is to stop first again; under OnDelete a
// running one is kept), and removes its
// containers of every slot not assigned to it. It never counts, ranks or
// trims: that is the leader's. Pure, as the rest of plan.

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// planAssigned runs the assigned slots. removing are the controller's
// containers Docker is removing already; blocked are the slots whose names
// containers outside the set hold.
func planAssigned(in planInput, d *decision, removing []api.Task, blocked map[int]string) {
	planUnassigned(in, d)
	window := in.spec.DesiredState.AvailableAfter()
	// by slot, the index in d.active of the container holding its name (a
	// Task is large: the map holds no copies)
	named := make(map[int]int, len(d.active))
	var renamed []int
	for i := range d.active {
		if holdsSlot(in.id, d.active[i]) {
			named[slotOf(d.active[i])] = i
		} else {
			renamed = append(renamed, i)
		}
	}
	held := make(map[int]bool, len(removing))
	for _, t := range removing {
		if holdsSlot(in.id, t) {
			held[slotOf(t)] = true
		}
	}
	var creates []int
	steps := 0
	for _, slot := range slices.Sorted(maps.Keys(in.assigned)) {
		a := in.assigned[slot]
		hash := in.hashOf(slot)
		i, ok := named[slot]
		if !ok {
			if _, taken := blocked[slot]; !taken && !held[slot] {
				creates = append(creates, slot)
			}
			if held[slot] {
				d.requeue(time.Second) // its destroy event queues it too; this is a backstop
			}
			continue
		}
		t := d.active[i]
		switch {
		case a.Replace != "" && a.Replace == t.ID:
			// unhealthy: the leader ordered its task replaced
			// (registry/decide/health.go), within its bounds
			if steps == in.burst {
				d.more = true
				continue
			}
			d.deletes = append(d.deletes, t)
			d.unhealthy = append(d.unhealthy, t)
			steps++
			creates = append(creates, slot)
			continue
		case t.Labels[api.LabelTemplateHash] == hash || a.OnDelete || a.TemplateHash == "":
			// the current template; or kept under OnDelete; or assigned
			// before assignments carried a template, so that the leader
			// rolls it within the bounds rather than this node at once
			continue
		case steps == in.burst:
			d.more = true
			continue
		case a.StartFirst:
			d.renames = append(d.renames, rename{task: t, name: outdatedName(in.id, slot, t.ID)})
		default:
			d.deletes = append(d.deletes, t)
		}
		steps++
		d.rolloutSteps++
		d.rolled = true
		creates = append(creates, slot)
		d.event(api.EventNormal, "RollingUpdate", "replacing %s (template %s) with template %s", t.Name, t.Labels[api.LabelTemplateHash], hash)
	}
	// an old container renamed out for its successor goes once the
	// successor is available, or at once when the slot is to stop first
	// now (its template changed again): a slot that stops first has one
	// container at a time
	for _, r := range renamed {
		t := d.active[r]
		slot := slotOf(t)
		if !in.wants(slot) {
			continue // planUnassigned's
		}
		i, ok := named[slot]
		var s api.Task
		if ok {
			s = d.active[i]
		}
		switch {
		case !in.assigned[slot].StartFirst:
			d.deletes = append(d.deletes, t)
			d.rolled = true
		case ok && s.Labels[api.LabelTemplateHash] == in.hashOf(slot) && available(s, window, in.now):
			d.deletes = append(d.deletes, t)
			d.rolled = true
		case ok && s.Ready():
			d.requeue(window - in.now.Sub(s.StartedAt))
		}
	}
	planCreates(in, d, creates)
}

// planUnassigned deletes the active containers whose slot is not this
// node's, within the burst limit. They stay in d.active, and so in the
// report, until the engine has removed them: a slot whose container still
// runs here is not free for another node, however many the burst limit
// leaves for the next pass.
func planUnassigned(in planInput, d *decision) {
	var gone []api.Task
	for _, t := range d.active {
		if !in.wants(slotOf(t)) {
			gone = append(gone, t)
		}
	}
	if len(gone) == 0 {
		return
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].Name < gone[j].Name })
	n := min(len(gone), in.burst)
	d.deletes = append(d.deletes, gone[:n]...)
	d.more = d.more || n < len(gone)
	d.event(api.EventNormal, "Unassigned", "removing %d container(s) of slots no longer assigned to this node", len(gone))
}
