package leader

import (
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// TestADecisionSeesWhatTheOtherControllersHold: the view counts every
// slot; a decision's copy takes its own out, and leaves the view as it
// was.
func TestADecisionSeesWhatTheOtherControllersHold(t *testing.T) {
	web := &schedSpec{ctl: decide.Controller{ID: "web", Ports: []string{"80/TCP"}, Reserve: decide.Resources{Memory: 100}}}
	db := &schedSpec{ctl: decide.Controller{ID: "db", Ports: []string{"80/TCP"}, Reserve: decide.Resources{Memory: 10}}}
	loads := map[string]*nodeLoad{"a": {}, "b": {}}
	loads["a"].add(web, 1)
	loads["a"].add(web, 1)
	loads["b"].add(web, 1)
	loads["b"].add(db, 1)
	var v nodeView
	for _, name := range []string{"b", "a", "c"} {
		v.set(name, &nodeState{node: api.Node{Name: name}, alive: true}, api.NodeConfig{}, loads[name], time.Time{})
	}
	mine := map[int]decide.Assignment{1: {Node: "a"}, 2: {Node: "a"}, 3: {Node: "b"}}
	got := v.forController(nil, web, mine, loads)
	if len(got) != 3 || got[0].Name != "a" || got[1].Name != "b" || got[2].Name != "c" {
		t.Fatalf("nodes %v, want a, b, c in order", got)
	}
	if a := got[0]; a.Slots != 0 || a.Used.Memory != 0 || a.Ports["80/TCP"] {
		t.Errorf("a as web sees it: %d slots, %d bytes, ports %v; want nothing of its own", a.Slots, a.Used.Memory, a.Ports)
	}
	if b := got[1]; b.Slots != 1 || b.Used.Memory != 10 || !b.Ports["80/TCP"] {
		t.Errorf("b as web sees it: %d slots, %d bytes, ports %v; want db's slot, 10 bytes and port 80", b.Slots, b.Used.Memory, b.Ports)
	}
	if a := v.nodes[0]; a.Slots != 2 || a.Used.Memory != 200 || !a.Ports["80/TCP"] {
		t.Errorf("the view itself changed: a has %d slots, %d bytes, ports %v", a.Slots, a.Used.Memory, a.Ports)
	}
}

// TestAPlacementHandsOutTheCapacityLessTheHostsReserve: a task that fits
// in what a node registered but not in that less its --node-reserve stays
// unassigned, Unschedulable for memory; without the reserve it is placed.
func TestAPlacementHandsOutTheCapacityLessTheHostsReserve(t *testing.T) {
	web := decide.Controller{ID: "web", Replicas: 1, Revision: 2, Hash: "h", Unavailable: 1,
		Reserve: decide.Resources{Memory: 3 << 30, CPU: 512}}
	decideOn := func(reserved api.NodeReserved) decide.Result {
		var v nodeView
		node := api.Node{Name: "a", Capacity: api.NodeCapacity{CPUs: 2, Memory: 4 << 30}, Reserved: reserved}
		v.set("a", &nodeState{node: node, alive: true}, api.NodeConfig{}, nil, time.Time{})
		return decide.Decide(decide.Input{Controller: web, Nodes: v.forController(nil, &schedSpec{ctl: web}, nil, nil), Now: time.Now()})
	}

	if r := decideOn(api.NodeReserved{}); len(r.Changes) != 1 || r.Changes[0].New == nil || r.Changes[0].New.Node != "a" || len(r.Unschedulable) != 0 {
		t.Fatalf("without a reserve: changes %+v, unschedulable %v; want slot 1 on a", r.Changes, r.Unschedulable)
	}
	r := decideOn(api.NodeReserved{Memory: 2 << 30, CPUs: 0.5})
	if len(r.Changes) != 0 || len(r.Unschedulable) != 1 || r.Unschedulable[0] != 1 {
		t.Fatalf("with 2GiB reserved: changes %+v, unschedulable %v; want slot 1 unassigned", r.Changes, r.Unschedulable)
	}
	if want := "a: memory: needs 3GiB, 2GiB free of 2GiB"; !strings.Contains(r.Reason, want) {
		t.Errorf("reason %q, want it to name %q", r.Reason, want)
	}
}

// TestAReserveOfAllOfAResourceStillEnforcesIt: the reserve leaves 1 of a
// resource it takes all of, never 0, which placement would not enforce;
// a resource the node did not register stays 0.
func TestAReserveOfAllOfAResourceStillEnforcesIt(t *testing.T) {
	got := allocatable(&api.Node{Capacity: api.NodeCapacity{CPUs: 1, Memory: 1 << 30}, Reserved: api.NodeReserved{CPUs: 2, Memory: 1 << 30}})
	if got != (decide.Resources{Memory: 1, CPU: 1}) {
		t.Errorf("all reserved: %+v, want 1 byte and 1 share", got)
	}
	got = allocatable(&api.Node{Capacity: api.NodeCapacity{CPUs: 4, Memory: 0}, Reserved: api.NodeReserved{CPUs: 1.5, Memory: 1 << 30}})
	if got != (decide.Resources{Memory: 0, CPU: 4096 - 1536}) {
		t.Errorf("memory not registered: %+v, want memory 0 and 2560 shares", got)
	}
}
