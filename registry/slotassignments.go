package registry

// This file is the type both roles keep one controller's slot assignments
// in. It is a sorted slice rather than a map: a host of 10,000
// controllers of 10 replicas holds 20,000 of them (the leader's and the
// node's), and a map of 10 such entries takes a 1,536-byte allocation
// where the slice takes 240 bytes. Each entry holds its assignment as a
// handle to the one copy of that value: a controller's slots mostly share
// one (the same node, template and flags), and an entry is 24 bytes, not
// 88.

import (
	"cmp"
	"iter"
	"slices"
	"unique"

	"github.com/replication-manager/replication-manager/api"
)

// SlotAssignments are one controller's slot assignments, sorted by slot;
// the zero value has none. A value once shared is never changed: With
// and Without return a changed copy. Set and Delete change a value in
// place, for its builder or its only owner, and only while it is not
// shared.
type SlotAssignments struct {
	s []slotEntry
}

// slotEntry is one slot's assignment: the value written, and the
// revision of the key it was read from.
type slotEntry struct {
	slot int
	rev  int64
	a    unique.Handle[api.Assignment]
}

// newSlotEntry is slot's entry for v. Two entries of equal values hold
// the same handle, so == compares them (Equal).
func newSlotEntry(slot int, v SlotAssignment) slotEntry {
	return slotEntry{slot: slot, rev: v.Rev, a: unique.Make(v.Assignment)}
}

// value is the entry's assignment.
func (e slotEntry) value() SlotAssignment {
	return SlotAssignment{Assignment: e.a.Value(), Rev: e.rev}
}

// find returns where slot is, or would be inserted, and whether it is.
func (a SlotAssignments) find(slot int) (int, bool) {
	return slices.BinarySearchFunc(a.s, slot, func(e slotEntry, slot int) int { return cmp.Compare(e.slot, slot) })
}

// Get returns slot's assignment, and whether there is one.
func (a SlotAssignments) Get(slot int) (SlotAssignment, bool) {
	if i, ok := a.find(slot); ok {
		return a.s[i].value(), true
	}
	return SlotAssignment{}, false
}

// Len is the number of slots assigned.
func (a SlotAssignments) Len() int { return len(a.s) }

// All yields each slot and its assignment, in slot order.
func (a SlotAssignments) All() iter.Seq2[int, SlotAssignment] {
	return func(yield func(int, SlotAssignment) bool) {
		for _, e := range a.s {
			if !yield(e.slot, e.value()) {
				return
			}
		}
	}
}

// Slots are the slots assigned, in order, in a slice of their own (nil
// when none).
func (a SlotAssignments) Slots() []int {
	if len(a.s) == 0 {
		return nil
	}
	out := make([]int, len(a.s))
	for i, e := range a.s {
		out[i] = e.slot
	}
	return out
}

// Equal reports whether a and b assign the same slots the same way.
func (a SlotAssignments) Equal(b SlotAssignments) bool { return slices.Equal(a.s, b.s) }

// With returns a copy of a with slot's assignment v.
func (a SlotAssignments) With(slot int, v SlotAssignment) SlotAssignments {
	i, ok := a.find(slot)
	if ok {
		s := slices.Clone(a.s)
		s[i] = newSlotEntry(slot, v)
		return SlotAssignments{s}
	}
	s := make([]slotEntry, 0, len(a.s)+1)
	s = append(append(append(s, a.s[:i]...), newSlotEntry(slot, v)), a.s[i:]...)
	return SlotAssignments{s}
}

// Without returns a copy of a without slot: a itself when it has none.
func (a SlotAssignments) Without(slot int) SlotAssignments {
	i, ok := a.find(slot)
	switch {
	case !ok:
		return a
	case len(a.s) == 1:
		return SlotAssignments{}
	}
	s := make([]slotEntry, 0, len(a.s)-1)
	return SlotAssignments{append(append(s, a.s[:i]...), a.s[i+1:]...)}
}

// Set sets slot's assignment to v in place: only on a value not shared.
// A slot past the last is appended, in amortized constant time; the room
// it grows by is an eighth, so that a value built up stays about its
// size.
func (a *SlotAssignments) Set(slot int, v SlotAssignment) {
	i, ok := a.find(slot)
	if ok {
		a.s[i] = newSlotEntry(slot, v)
		return
	}
	if len(a.s) == cap(a.s) {
		grown := make([]slotEntry, len(a.s), len(a.s)+1+len(a.s)/8)
		copy(grown, a.s)
		a.s = grown
	}
	a.s = slices.Insert(a.s, i, newSlotEntry(slot, v))
}

// Delete removes slot in place: only on a value not shared.
func (a *SlotAssignments) Delete(slot int) {
	if i, ok := a.find(slot); ok {
		a.s = slices.Delete(a.s, i, i+1)
	}
}
