package registry

import (
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

// nodeInput is web with replicas on a node that was assigned slots.
func nodeInput(replicas int, slots []int, tasks ...api.Task) planInput {
	mine := make(map[int]bool, len(slots))
	for _, s := range slots {
		mine[s] = true
	}
	return planInput{
		id: "web", spec: newController("web", replicas), hash: webHash, revision: 30, createRevision: 1,
		tasks: tasks, now: planNow, registryID: testRegistryID, burst: 50, slots: mine,
		state: controllerState{proven: webHash, incarnation: 1},
	}
}

func TestPlanOnANode(t *testing.T) {
	tests := []struct {
		name             string
		replicas         int
		slots            []int
		tasks            []api.Task
		creates, deletes []string
		status           int // replicas in the node's status after apply
	}{
		{name: "creates only its own slots", replicas: 4, slots: []int{2, 4},
			creates: []string{"web-2", "web-4"}, status: 2},
		{name: "no slot assigned: creates nothing", replicas: 3, slots: nil},
		{name: "removes its containers of slots assigned elsewhere", replicas: 4, slots: []int{1, 3},
			tasks: []api.Task{ours(1), ours(2), ours(3)}, deletes: []string{"web-2"}, status: 2},
		{name: "never more than replicas, even before the leader takes an assignment back", replicas: 1, slots: []int{1, 3},
			tasks: []api.Task{ours(1), ours(3)}, deletes: []string{"web-3"}, status: 1},
		{name: "keeps the slot numbers the leader gave it, above replicas too", replicas: 2, slots: []int{3, 4},
			tasks: []api.Task{ours(3)}, creates: []string{"web-4"}, status: 2},
		{name: "a moved slot is replaced here once assigned here", replicas: 2, slots: []int{1, 2},
			tasks: []api.Task{ours(1)}, creates: []string{"web-2"}, status: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := nodeInput(tt.replicas, tt.slots, tt.tasks...)
			d := plan(in)
			if got := createNames(d); !slices.Equal(got, tt.creates) {
				t.Errorf("creates %v, want %v", got, tt.creates)
			}
			if got := deleteNames(d); !slices.Equal(got, tt.deletes) {
				t.Errorf("deletes %v, want %v", got, tt.deletes)
			}
			var created []api.Task
			for _, c := range d.creates {
				created = append(created, with(ours(slotOf(api.Task{Labels: c.Labels})), func(*api.Task) {}))
			}
			r := settle(in, d, outcome{created: created, deleted: d.deletes})
			if r.status == nil || r.status.Replicas != tt.status {
				t.Errorf("status %+v, want %d replicas", r.status, tt.status)
			}
		})
	}
}

func TestPlanOnANodeKeepsABlockedSlotInPlace(t *testing.T) {
	// left outside the set by a selector change, it still holds web-2
	outside := with(ours(2), func(t *api.Task) { t.Labels["name"] = "old" })
	in := nodeInput(2, []int{2}, outside)
	d := plan(in)
	if len(d.creates) != 0 {
		t.Errorf("creates %v: a node must not take a slot the leader did not give it", createNames(d))
	}
	if d.failure == nil || d.failure.Reason != api.ReasonSlotConflict {
		t.Errorf("failure %+v, want the SlotConflict named", d.failure)
	}
}

func TestProgressOnANodeCountsItsOwnSlots(t *testing.T) {
	in := nodeInput(4, []int{1, 3}, ours(1), ours(3))
	r := settle(in, plan(in), outcome{})
	c := r.status.FindCondition(api.ConditionProgressing)
	if c == nil || c.Reason != api.ReasonRolloutComplete || c.Message != "2 of 2 updated, 2 available" {
		t.Errorf("Progressing %+v, want RolloutComplete with 2 of the node's 2", c)
	}
}
