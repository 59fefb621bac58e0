package leader

import (
	"testing"

	"github.com/replication-manager/replication-manager/registry"
)

// Issue 26, item 10: an assignment key whose value does not decode was
// skipped by the mirror, so every write placing its slot compared a key
// that should not exist and conflicted, at every sync. The next write
// replaces it, compared against its ModRevision, and deletes one of a slot
// the controller does not have; a later valid value or delete forgets it.
func TestAnUndecodableAssignmentIsWrittenOverByTheNextDecision(t *testing.T) {
	s := listedLeader(t)
	s.testPutSpec(t, "web", 2)
	s.testPutNode(t, "a")
	s.putAssignment(registry.KV{Key: s.store.AssignmentKey("web", 1), Value: []byte("{not json"), ModRev: 4})
	s.deliver()
	s.putAssignment(registry.KV{Key: s.store.AssignmentKey("web", 7), Value: []byte(`"a"x`), ModRev: 5})
	s.deliver()

	op := s.decideController("web")
	if op == nil {
		t.Fatal("no write decided")
	}
	got := map[int]registry.AssignChange{}
	for _, c := range op.w.Changes {
		got[c.Slot] = c
	}
	if c, ok := got[1]; !ok || c.Next == nil || c.OldRev != 4 {
		t.Errorf("slot 1 (undecodable at 4): change %+v, want a placement comparing ModRevision 4", c)
	}
	if c, ok := got[2]; !ok || c.Next == nil || c.OldRev != 0 {
		t.Errorf("slot 2 (no key): change %+v, want a placement of a new key", c)
	}
	if c, ok := got[7]; !ok || c.Next != nil || c.OldRev != 5 {
		t.Errorf("slot 7 (undecodable at 5, beyond replicas): change %+v, want a delete comparing ModRevision 5", c)
	}
	if len(got) != 3 {
		t.Errorf("changes %+v, want slots 1, 2 and 7", op.w.Changes)
	}

	s.delAssignment(s.store.AssignmentKey("web", 7), 6)
	s.deliver()
	s.putAssignment(registry.KV{Key: s.store.AssignmentKey("web", 1), Value: []byte(`{"node":"a"}`), ModRev: 6})
	s.deliver()
	if bad := s.undecodable["web"]; len(bad) != 0 {
		t.Errorf("undecodable after a valid value and a delete: %v, want none", bad)
	}
}
