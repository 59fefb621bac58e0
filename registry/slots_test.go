package registry

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// task builds a container in slot (0 means no slot label) with a state and
// a health.
func task(name string, slot int, state, health string) api.Task {
	labels := map[string]string{api.LabelController: "web"}
	if slot > 0 {
		labels[api.LabelSlot] = strconv.Itoa(slot)
	}
	return api.Task{ID: "id-" + name, Name: name, Labels: labels, State: state, Health: health}
}

func names(tasks []api.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.Name
	}
	return out
}

func TestRankForDeletionOrder(t *testing.T) {
	tasks := []api.Task{
		task("ready-1", 1, api.StateRunning, api.HealthHealthy),
		task("ready-3", 3, api.StateRunning, api.HealthNone),
		task("unhealthy-2", 2, api.StateRunning, api.HealthUnhealthy),
		task("paused-4", 4, api.StatePaused, api.HealthNone),
		task("starting-5", 5, api.StateRunning, api.HealthStarting),
		task("noslot", 0, api.StateRunning, api.HealthNone),
		task("restarting-1", 1, api.StateRestarting, api.HealthNone),
	}
	got := names(rankForDeletion(tasks, ""))
	want := []string{
		"paused-4", "restarting-1", // not running, highest slot first
		"starting-5", "unhealthy-2", // running but not ready
		"noslot", "ready-3", "ready-1", // ready: no slot counts as highest
	}
	if !slices.Equal(got, want) {
		t.Errorf("rankForDeletion = %v, want %v", got, want)
	}
	if tasks[0].Name != "ready-1" {
		t.Error("rankForDeletion reordered its input")
	}
}

func TestRankForDeletionBreaksTiesByAgeThenName(t *testing.T) {
	old, young := task("b", 2, api.StateRunning, ""), task("a", 2, api.StateRunning, "")
	old.Created = time.Unix(100, 0)
	young.Created = time.Unix(200, 0)
	same1, same2 := task("d", 1, api.StateRunning, ""), task("c", 1, api.StateRunning, "")
	got := names(rankForDeletion([]api.Task{old, same1, young, same2}, ""))
	want := []string{"a", "b", "c", "d"}
	if !slices.Equal(got, want) {
		t.Errorf("rankForDeletion = %v, want %v", got, want)
	}
}

func TestFreeSlotsFillsLowestFirstWithinTheLimit(t *testing.T) {
	taken := map[int]bool{1: true, 3: true}
	for _, tc := range []struct {
		n, limit int
		want     []int
	}{
		{0, 10, []int{}},
		{1, 10, []int{2}},
		{3, 10, []int{2, 4, 5}},
		{3, 4, []int{2, 4}}, // never above the limit
		{1, 1, []int{}},
	} {
		if got := freeSlots(taken, nil, tc.n, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("freeSlots(n=%d, limit=%d) = %v, want %v", tc.n, tc.limit, got, tc.want)
		}
	}
}

func TestFreeSlotsSkipsBlockedSlotsAndMovesTheLimitUp(t *testing.T) {
	// slot 1's name is held by a container outside the set: a replica of
	// 3 goes to slot 4 instead, and no further
	blocked := map[int]string{1: "web-1 (started by hand)"}
	if got, want := freeSlots(nil, blocked, 5, 3), []int{2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("freeSlots = %v, want %v", got, want)
	}
	// a slot taken by a container on its way out does not move the limit
	if got, want := freeSlots(map[int]bool{2: true}, blocked, 5, 3), []int{3, 4}; !slices.Equal(got, want) {
		t.Errorf("freeSlots with slot 2 taken = %v, want %v", got, want)
	}
}

func TestTaskNameIsIDDashSlot(t *testing.T) {
	if got := taskName("web", 12); got != "web-12" {
		t.Errorf("taskName = %q, want web-12", got)
	}
}
