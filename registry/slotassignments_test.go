package registry

import (
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

// on is an assignment of a slot to node, written at rev.
func on(node string, rev int64) SlotAssignment {
	return SlotAssignment{Assignment: api.Assignment{Node: node}, Rev: rev}
}

// slotsOf lists a's slots in the order All yields them.
func slotsOf(a SlotAssignments) []int {
	var out []int
	for slot := range a.All() {
		out = append(out, slot)
	}
	return out
}

func TestSlotAssignmentsAreInSlotOrderWhateverTheOrderTheyCameIn(t *testing.T) {
	a := SlotAssignments{}.With(3, on("c", 3)).With(1, on("a", 1)).With(10, on("j", 10)).With(2, on("b", 2))
	if got := slotsOf(a); !slices.Equal(got, []int{1, 2, 3, 10}) {
		t.Errorf("slots %v, want [1 2 3 10]", got)
	}
	if got := a.Slots(); !slices.Equal(got, []int{1, 2, 3, 10}) {
		t.Errorf("Slots() = %v, want [1 2 3 10]", got)
	}
	if a.Len() != 4 {
		t.Errorf("Len %d, want 4", a.Len())
	}
	for slot, v := range a.All() {
		if got, ok := a.Get(slot); !ok || got != v {
			t.Errorf("Get(%d) = %+v, %v; want %+v", slot, got, ok, v)
		}
	}
	if got, ok := a.Get(4); ok || got != (SlotAssignment{}) {
		t.Errorf("Get of a slot not assigned = %+v, %v; want none", got, ok)
	}
}

func TestWithAndWithoutLeaveTheValueTheyAreCalledOnAsItWas(t *testing.T) {
	a := SlotAssignments{}.With(1, on("a", 1)).With(3, on("c", 3))
	replaced := a.With(1, on("b", 5))
	inserted := a.With(2, on("b", 2))
	removed := a.Without(1)
	if got, _ := a.Get(1); got != on("a", 1) || !slices.Equal(slotsOf(a), []int{1, 3}) {
		t.Errorf("a changed: %v, slot 1 %+v", slotsOf(a), got)
	}
	if got, _ := replaced.Get(1); got != on("b", 5) || replaced.Len() != 2 {
		t.Errorf("slot 1 replaced: %+v (%d slots), want on b at 5", got, replaced.Len())
	}
	if got := slotsOf(inserted); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("slot 2 inserted: %v, want [1 2 3]", got)
	}
	if got := slotsOf(removed); !slices.Equal(got, []int{3}) {
		t.Errorf("slot 1 removed: %v, want [3]", got)
	}
	if got := a.Without(7); !got.Equal(a) {
		t.Errorf("without a slot not assigned: %v, want a as it is", slotsOf(got))
	}
	if got := removed.Without(3); got.Len() != 0 || !got.Equal(SlotAssignments{}) {
		t.Errorf("without the last slot: %v, want none", slotsOf(got))
	}
}

func TestSetAndDeleteChangeTheirOwnValue(t *testing.T) {
	var a SlotAssignments
	for _, slot := range []int{1, 10, 100, 2, 20, 3} { // the order of a list's keys
		a.Set(slot, on("a", int64(slot)))
	}
	a.Set(10, on("b", 11))
	a.Delete(100)
	a.Delete(5)
	want := SlotAssignments{}.With(1, on("a", 1)).With(2, on("a", 2)).With(3, on("a", 3)).With(10, on("b", 11)).With(20, on("a", 20))
	if !a.Equal(want) {
		t.Errorf("slots %v, want %v", slotsOf(a), slotsOf(want))
	}
}

func TestSlotAssignmentsAreEqualWhenTheyAssignTheSameSlotsTheSameWay(t *testing.T) {
	a := SlotAssignments{}.With(1, on("a", 1)).With(2, on("b", 2))
	if !a.Equal(SlotAssignments{}.With(2, on("b", 2)).With(1, on("a", 1))) {
		t.Error("the same assignments built in another order are not equal")
	}
	for name, b := range map[string]SlotAssignments{
		"another node":     a.With(2, on("c", 2)),
		"another revision": a.With(2, on("b", 3)),
		"one slot more":    a.With(3, on("c", 3)),
		"one slot less":    a.Without(2),
		"none":             {},
	} {
		if a.Equal(b) || b.Equal(a) {
			t.Errorf("equal to %s", name)
		}
	}
	if !(SlotAssignments{}).Equal(SlotAssignments{}.With(1, on("a", 1)).Without(1)) {
		t.Error("none is not equal to none")
	}
}
