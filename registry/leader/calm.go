package leader

// This file is the periodic pass's short way through a decision: a
// controller whose last decision found nothing to write and nothing to
// wait for is found so again, without deciding, while the loop has taken
// in no event since (no change of any mirror, no answer to a write) and
// the controller was woken by nothing but the pass. The count of events
// is the whole leader's, not the controller's: a decision reads the nodes
// and what the other controllers hold on them, so any change anywhere
// makes the next pass decide in full, as before; a pass over a fleet where
// nothing changed decides nothing. Time is the decision's to tell: one
// that asked to be made again later (RecheckAfter) is not calm.

import "github.com/replication-manager/replication-manager/registry/decide"

// leaderInputs are the counts a decision of one controller was made at.
type leaderInputs struct {
	world, wakes uint64
}

// take runs one of the mailbox's events on the loop, and counts it.
func (s *ReplicationManager) take(event func()) {
	event()
	s.world++
}

// inputsOf are id's counts now.
func (s *ReplicationManager) inputsOf(id string) leaderInputs {
	return leaderInputs{world: s.world, wakes: s.queue.woken(id)}
}

// unchanged reports whether id's last decision was calm, at the counts
// of now.
func (s *ReplicationManager) unchanged(id string, now leaderInputs) bool {
	rec := s.records[id]
	return rec != nil && rec.calm != nil && *rec.calm == now
}

// calm reports whether a decision that writes nothing left nothing to wait
// for: a valid spec, no slot it could not place, none released and not
// yet seen gone, no unhealthy slot, no container in its monitor window, no
// rollback step, a rollout record as it was, no undecodable assignment,
// and no recheck asked for.
func (s *ReplicationManager) calm(id string, sp *schedSpec, in decide.Input, res decide.Result, rec *leaderRecord) bool {
	return sp != nil && sp.invalid == nil && res.RecheckAfter == 0 &&
		len(res.Unschedulable) == 0 && len(res.Moves) == 0 && len(res.Unhealthy) == 0 && len(res.Replaced) == 0 &&
		len(res.Health) == 0 && len(res.Watched) == 0 && len(in.Watched) == 0 && res.Rollback == "" &&
		res.Rollout == in.Rollout && len(rec.released) == 0 && len(s.undecodable[id]) == 0
}
