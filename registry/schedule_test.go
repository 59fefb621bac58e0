package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var schedNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// liveNodes returns registered nodes by name, each labelled zone=<name>.
func liveNodes(names ...string) map[string]*schedNode {
	out := make(map[string]*schedNode, len(names))
	for _, n := range names {
		out[n] = &schedNode{name: n, labels: map[string]string{"zone": n}, alive: true}
	}
	return out
}

// placed is a controller's assignments after applying the changes: slot → node.
func placed(in scheduleInput, res scheduleResult, id string) map[int]string {
	out := map[int]string{}
	for slot, a := range in.assignments[id] {
		out[slot] = a.node
	}
	for _, c := range res.changes {
		if c.id != id {
			continue
		}
		if c.node == "" {
			delete(out, c.slot)
		} else {
			out[c.slot] = c.node
		}
	}
	return out
}

func perNode(slots map[int]string) map[string]int {
	out := map[string]int{}
	for _, n := range slots {
		out[n]++
	}
	return out
}

func assigned(pairs map[int]string) map[int]slotAssignment {
	out := make(map[int]slotAssignment, len(pairs))
	for slot, node := range pairs {
		out[slot] = slotAssignment{node: node, rev: int64(100 + slot)}
	}
	return out
}

func TestScheduleSpreadsOverTheNodes(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 4}},
		nodes:       liveNodes("a", "b"),
		now:         schedNow,
	}
	res := schedule(in)
	if got := perNode(placed(in, res, "web")); !maps.Equal(got, map[string]int{"a": 2, "b": 2}) {
		t.Errorf("4 replicas over 2 nodes: got %v, want 2 and 2", got)
	}
	for _, c := range res.changes {
		if c.old.rev != 0 {
			t.Errorf("first placement of slot %d compares revision %d, want 0 (create)", c.slot, c.old.rev)
		}
	}
}

func TestScheduleKeepsGoodAssignments(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 3}},
		nodes:       liveNodes("a", "b", "c"),
		// all on a: unbalanced, but good; placement never moves them
		assignments: map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "a", 2: "a", 3: "a"})},
		now:         schedNow,
	}
	if res := schedule(in); len(res.changes) != 0 {
		t.Errorf("a steady pass wrote %d assignment(s): %+v; want none", len(res.changes), res.changes)
	}

	// a scale-up places the new slots on the nodes with fewest of web
	in.controllers[0].replicas = 5
	res := schedule(in)
	got := placed(in, res, "web")
	if got[1] != "a" || got[2] != "a" || got[3] != "a" || got[4] == "a" || got[5] == "a" || got[4] == got[5] {
		t.Errorf("scale 3→5 with all on a: got %v, want slots 1-3 kept on a and 4, 5 on b and c", got)
	}
}

func TestScheduleBreaksTiesByTotalLoad(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "db", replicas: 2}, {id: "web", replicas: 1}},
		nodes:       liveNodes("a", "b"),
		assignments: map[string]map[int]slotAssignment{"db": assigned(map[int]string{1: "a", 2: "a"})},
		now:         schedNow,
	}
	res := schedule(in)
	if got := placed(in, res, "web"); got[1] != "b" {
		t.Errorf("web's slot went to %q, want b: a runs two containers already", got[1])
	}
}

func TestScheduleNodeSelector(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 3, selector: map[string]string{"zone": "b"}}},
		nodes:       liveNodes("a", "b"),
		now:         schedNow,
	}
	res := schedule(in)
	if got := perNode(placed(in, res, "web")); !maps.Equal(got, map[string]int{"b": 3}) {
		t.Errorf("nodeSelector zone=b: got %v, want all 3 on b", got)
	}

	// a selector that no node matches leaves every slot unassigned, and says why
	in.controllers[0].selector = map[string]string{"zone": "c"}
	res = schedule(in)
	if got := placed(in, res, "web"); len(got) != 0 {
		t.Errorf("nodeSelector zone=c: placed %v, want nothing", got)
	}
	u := res.unschedulable["web"]
	if !slices.Equal(u.slots, []int{1, 2, 3}) || !strings.Contains(u.reason, "no node matches nodeSelector zone=c") {
		t.Errorf("unschedulable: got %+v, want slots 1-3 and the selector named", u)
	}

	// changing the selector moves the slots whose node no longer matches,
	// within the bounds of an update: one at a time by default, each once
	// the one before is available on its new node
	in.controllers[0].selector = map[string]string{"zone": "a"}
	in.controllers[0].maxMoving = 1
	in.controllers[0].worth = map[int]int{1: slotReady, 2: slotReady, 3: slotReady}
	in.assignments = map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "b", 2: "b", 3: "b"})}
	for step := 1; step <= 3; step++ {
		res = schedule(in)
		got := placed(in, res, "web")
		if n := perNode(got); n["a"] != step || n["b"] != 3-step {
			t.Fatalf("selector changed to zone=a, step %d: got %v, want %d moved to a", step, got, step)
		}
		if res.waiting["web"] != (step < 3) {
			t.Errorf("step %d: waiting %v, want %v", step, res.waiting["web"], step < 3)
		}
		for _, c := range res.changes {
			if c.old.rev != in.assignments["web"][c.slot].rev {
				t.Errorf("move of slot %d compares revision %d, want the key's %d", c.slot, c.old.rev, in.assignments["web"][c.slot].rev)
			}
		}
		// the moved slot's new container is not available yet: nothing more moves
		moved := res.changes[0].slot
		in.assignments = map[string]map[int]slotAssignment{"web": assigned(got)}
		in.controllers[0].worth[moved] = slotMissing
		if res := schedule(in); len(res.changes) != 0 {
			t.Fatalf("step %d: %+v moved while slot %d is not available", step, res.changes, moved)
		}
		in.controllers[0].worth[moved] = slotReady
	}
}

func TestScheduleHostPorts(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 3, ports: []string{"8080/TCP"}}},
		nodes:       liveNodes("a", "b"),
		now:         schedNow,
	}
	res := schedule(in)
	if got := perNode(placed(in, res, "web")); !maps.Equal(got, map[string]int{"a": 1, "b": 1}) {
		t.Errorf("3 replicas publishing 8080 over 2 nodes: got %v, want one per node", got)
	}
	u := res.unschedulable["web"]
	if !slices.Equal(u.slots, []int{3}) || !strings.Contains(u.reason, "host port(s) 8080/TCP") {
		t.Errorf("unschedulable: got %+v, want slot 3 and the port named", u)
	}

	// another controller on the same port cannot go anywhere either
	in.controllers = append(in.controllers, schedController{id: "zz", replicas: 1, ports: []string{"8080/TCP"}})
	if res := schedule(in); len(res.unschedulable["zz"].slots) != 1 {
		t.Errorf("a second controller on 8080: unschedulable %+v, want its one slot", res.unschedulable["zz"])
	}
	// the same port over UDP is another port
	in.controllers[1].ports = []string{"8080/UDP"}
	if res := schedule(in); len(res.unschedulable["zz"].slots) != 0 {
		t.Errorf("8080/UDP next to 8080/TCP: unschedulable %+v, want none", res.unschedulable["zz"])
	}
}

func TestScheduleReassignsAfterTheGracePeriod(t *testing.T) {
	nodes := liveNodes("a", "b")
	nodes["b"].alive, nodes["b"].goneSince = false, schedNow.Add(-10*time.Second)
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 4}},
		nodes:       nodes,
		assignments: map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "a", 2: "b", 3: "a", 4: "b"})},
		now:         schedNow,
		grace:       30 * time.Second,
	}
	res := schedule(in)
	if len(res.changes) != 0 {
		t.Errorf("b gone for 10s of a 30s grace: %d change(s) %+v, want none", len(res.changes), res.changes)
	}
	if res.recheckAfter != 20*time.Second {
		t.Errorf("recheckAfter: got %s, want the 20s left of b's grace", res.recheckAfter)
	}

	in.now = schedNow.Add(21 * time.Second)
	res = schedule(in)
	if got := perNode(placed(in, res, "web")); !maps.Equal(got, map[string]int{"a": 4}) {
		t.Errorf("b gone past its grace: got %v, want all 4 on a", got)
	}
}

func TestScheduleScaleDownAndDelete(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 1}},
		nodes:       liveNodes("a", "b"),
		assignments: map[string]map[int]slotAssignment{
			"web":  assigned(map[int]string{1: "a", 2: "b", 3: "a"}),
			"gone": assigned(map[int]string{1: "b"}),
		},
		now: schedNow,
	}
	res := schedule(in)
	if got := placed(in, res, "web"); !maps.Equal(got, map[int]string{1: "a"}) {
		t.Errorf("scale to 1: got %v, want slot 1 kept on a", got)
	}
	if got := placed(in, res, "gone"); len(got) != 0 {
		t.Errorf("a deleted controller keeps %v, want no assignment", got)
	}
}

func TestScheduleLeavesAFrozenControllerAlone(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 0, frozen: true}},
		nodes:       liveNodes("a"),
		assignments: map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "gone-node", 2: "a"})},
		now:         schedNow,
	}
	if res := schedule(in); len(res.changes) != 0 {
		t.Errorf("an invalid spec moved %+v, want nothing", res.changes)
	}
}

func TestScheduleNoNodes(t *testing.T) {
	in := scheduleInput{controllers: []schedController{{id: "web", replicas: 2}}, nodes: map[string]*schedNode{}, now: schedNow}
	res := schedule(in)
	if u := res.unschedulable["web"]; len(u.slots) != 2 || u.reason != "no node is registered" {
		t.Errorf("no nodes: got %+v", u)
	}
}

// BenchmarkScheduleFirstAssignment is the pure part of assigning 10,000
// controllers of 10 replicas over 100 nodes for the first time.
func BenchmarkScheduleFirstAssignment(b *testing.B) {
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("node-%03d", i)
	}
	in := scheduleInput{nodes: liveNodes(names...), now: schedNow}
	for i := range 10000 {
		in.controllers = append(in.controllers, schedController{id: fmt.Sprintf("c%05d", i), replicas: 10})
	}
	for b.Loop() {
		if res := schedule(in); len(res.changes) != 100000 {
			b.Fatalf("%d changes", len(res.changes))
		}
	}
}

func TestScheduleSlotNamesTakenOnANode(t *testing.T) {
	blockedOn := func(slot int, nodes ...string) map[int]map[string]bool {
		m := map[string]bool{}
		for _, n := range nodes {
			m[n] = true
		}
		return map[int]map[string]bool{slot: m}
	}
	t.Run("on one node, the slot takes the next free number", func(t *testing.T) {
		in := scheduleInput{
			controllers: []schedController{{id: "web", replicas: 3, blocked: blockedOn(1, "a")}},
			nodes:       liveNodes("a"),
			now:         schedNow,
		}
		res := schedule(in)
		if got := placed(in, res, "web"); !maps.Equal(got, map[int]string{2: "a", 3: "a", 4: "a"}) {
			t.Errorf("slot 1's name taken on a: got %v, want slots 2, 3 and 4 on a", got)
		}
		if len(res.unschedulable) != 0 {
			t.Errorf("unschedulable %v, want none", res.unschedulable)
		}
	})
	t.Run("with another node, the slot goes there", func(t *testing.T) {
		in := scheduleInput{
			controllers: []schedController{{id: "web", replicas: 2, blocked: blockedOn(1, "a")}},
			nodes:       liveNodes("a", "b"),
			assignments: map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "a", 2: "b"})},
			now:         schedNow,
		}
		res := schedule(in)
		if got := placed(in, res, "web"); !maps.Equal(got, map[int]string{1: "b", 2: "b"}) {
			t.Errorf("slot 1's name taken on a: got %v, want slot 1 moved to b", got)
		}
	})
	t.Run("an assigned slot moves to another number once its name is taken everywhere", func(t *testing.T) {
		in := scheduleInput{
			controllers: []schedController{{id: "web", replicas: 2, blocked: blockedOn(1, "a")}},
			nodes:       liveNodes("a"),
			assignments: map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "a", 2: "a"})},
			now:         schedNow,
		}
		res := schedule(in)
		if got := placed(in, res, "web"); !maps.Equal(got, map[int]string{2: "a", 3: "a"}) {
			t.Errorf("got %v, want slots 2 and 3", got)
		}
		// once the name is free again, nothing moves back: the count is met
		in.assignments = map[string]map[int]slotAssignment{"web": assigned(placed(in, res, "web"))}
		in.controllers[0].blocked = nil
		if res := schedule(in); len(res.changes) != 0 {
			t.Errorf("after the name came free: %+v, want no change", res.changes)
		}
	})
}

func TestScheduleScaleDownRemovesTheLeastUsefulFirst(t *testing.T) {
	in := scheduleInput{
		controllers: []schedController{{id: "web", replicas: 2,
			// slot 1 not ready, slot 2 ready, slot 3 outdated, slot 4 ready, slot 5 not created
			worth: map[int]int{1: slotNotReady, 2: slotReady, 3: slotOutdated, 4: slotReady}}},
		nodes:       liveNodes("a"),
		assignments: map[string]map[int]slotAssignment{"web": assigned(map[int]string{1: "a", 2: "a", 3: "a", 4: "a", 5: "a"})},
		now:         schedNow,
	}
	res := schedule(in)
	if got := placed(in, res, "web"); !maps.Equal(got, map[int]string{2: "a", 4: "a"}) {
		t.Errorf("scale 5→2: kept %v, want the two ready ones of the current template, slots 2 and 4", got)
	}
}
