package leader

import (
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
		v.set(name, &nodeState{node: api.Node{Name: name}, alive: true}, loads[name], time.Time{})
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
