package leader

// This file holds a decision back until the leader's view of the nodes
// is as new as the spec it is made from. Each prefix has a mirror of its
// own, and each mirror hands its changes to the loop apart from the
// others: a spec can reach the loop before a cordon, a drain or a label
// that etcd committed before it. A user who cordons a node and then
// applies a controller must find none of its slots placed there
// (docs/CONTRACT.md, Node maintenance), so a spec at revision R is
// decided once the loop has applied the nodes and their configs up to R:
// their changes, or etcd's word that there were none (a progress
// notification, which viewAsk asks for: progressasker.go).

import "math"

// viewPrefixes are the prefixes a placement reads besides the spec.
func (s *ReplicationManager) viewPrefixes() []string {
	return []string{s.store.NodesPrefix(), s.store.NodeConfigPrefix()}
}

// viewAt records, on the loop, that prefix's changes up to rev are
// applied, and queues the controllers that waited for the view to reach
// their spec.
func (s *ReplicationManager) viewAt(prefix string, rev int64) {
	if rev <= s.viewRevs[prefix] {
		return
	}
	s.viewRevs[prefix] = rev
	view := s.viewRev()
	for id, want := range s.behind {
		if want <= view {
			delete(s.behind, id)
			s.mark(id)
		}
	}
}

// viewRev is the revision up to which the loop has applied every change
// of the nodes and of their configs (viewRevs holds both prefixes from
// the start, at 0).
func (s *ReplicationManager) viewRev() int64 {
	view := int64(math.MaxInt64)
	for _, rev := range s.viewRevs {
		view = min(view, rev)
	}
	return view
}

// behindView reports whether a spec of id at rev is newer than the view;
// if it is, id waits, undecided, until the view reaches rev (viewAt), and
// etcd is asked where the watches of the view are.
func (s *ReplicationManager) behindView(id string, rev int64) bool {
	if rev <= s.viewRev() {
		return false
	}
	s.behind[id] = rev
	s.viewAsk.want(rev)
	return true
}

// viewProgress is the mirror of a prefix of the view told the revision
// its watch has reached: the loop applies it.
func (s *ReplicationManager) viewProgress(prefix string) func(int64) {
	return func(rev int64) {
		s.send(func() {
			s.viewAt(prefix, rev)
			s.answerWaiters()
		})
	}
}
