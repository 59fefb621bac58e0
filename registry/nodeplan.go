package registry

// This file is the part of the plan that only a node of several has
// (DESIGN.md section 8): it keeps the slots the leader assigned to it, and
// removes its containers of every other slot (after a scale-down, a move
// to another node, or when it comes back after a cut). Pure, as the rest
// of plan.

import (
	"maps"
	"slices"
	"sort"

	"github.com/replication-manager/replication-manager/api"
)

// planUnassigned deletes the active containers whose slot is not this
// node's, within the burst limit, and takes them out of the count.
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
	d.active = withoutTasks(d.active, gone)
	d.event(api.EventNormal, "Unassigned", "removing %d container(s) of slots no longer assigned to this node", len(gone))
}

// lowestSlots returns the lowest n of slots: a node never keeps more than
// replicas, even while the leader has yet to take the extra assignments of
// a scale-down back. nil stays nil (one host).
func lowestSlots(slots map[int]bool, n int) map[int]bool {
	if len(slots) <= n {
		return slots
	}
	sorted := slices.Sorted(maps.Keys(slots))
	out := make(map[int]bool, n)
	for _, slot := range sorted[:n] {
		out[slot] = true
	}
	return out
}

// freeAssignedSlots returns up to n of this node's slots, lowest first,
// that are neither taken nor blocked. Unlike freeSlots, a blocked slot
// moves to no other: the leader placed the slot here.
func freeAssignedSlots(in planInput, taken map[int]bool, blocked map[int]string, n int) []int {
	mine := make([]int, 0, len(in.slots))
	for slot := range in.slots {
		if in.wants(slot) {
			mine = append(mine, slot)
		}
	}
	slices.Sort(mine)
	out := make([]int, 0, n)
	for _, slot := range mine {
		if len(out) == n {
			break
		}
		if _, ok := blocked[slot]; !ok && !taken[slot] {
			out = append(out, slot)
		}
	}
	return out
}
