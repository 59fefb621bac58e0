package leader

// This file is what the leader does with an assignment key whose value
// does not decode (written by hand, or by a tool of another version). No
// node runs from it: the node reads it as no assignment. The leader counts
// the slot as unassigned, as its node does, and its next write for the
// controller replaces the value, compared against the key's ModRevision:
// the slot is placed again or, when the controller has no such slot, the
// key goes. Without this, every write that placed the slot compared a key
// that should not exist, conflicted, and was decided again at each sync.

import "github.com/replication-manager/replication-manager/registry"

// setUndecodable records that slot of id holds a value that does not
// decode at rev; rev 0 forgets it.
func (s *ReplicationManager) setUndecodable(id string, slot int, rev int64) {
	if rev == 0 {
		if _, ok := s.undecodable[id][slot]; ok {
			delete(s.undecodable[id], slot)
			if len(s.undecodable[id]) == 0 {
				delete(s.undecodable, id)
			}
		}
		return
	}
	if s.undecodable[id] == nil {
		s.undecodable[id] = map[int]int64{}
	}
	s.undecodable[id][slot] = rev
}

// overwriteUndecodable returns changes with every undecodable key of id
// replaced: a change that places its slot compares the key's ModRevision,
// and a key no change writes is deleted.
func (s *ReplicationManager) overwriteUndecodable(id string, changes []registry.AssignChange) []registry.AssignChange {
	bad := s.undecodable[id]
	if len(bad) == 0 {
		return changes
	}
	written := map[int]bool{}
	for i := range changes {
		if rev, ok := bad[changes[i].Slot]; ok && changes[i].OldRev == 0 {
			changes[i].OldRev = rev
		}
		written[changes[i].Slot] = true
	}
	for slot, rev := range bad {
		if !written[slot] {
			changes = append(changes, registry.AssignChange{ID: id, Slot: slot, OldRev: rev})
		}
	}
	return changes
}
