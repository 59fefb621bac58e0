package decide

// This file is the automatic rollback (updateStrategy.failureAction:
// rollback). It keeps the leader's record of the controller's rollouts
// (api.RolloutRecord, which the leader keeps in the status): the last
// template whose rollout completed, and the failures of the template being
// rolled to. A new container of that template that exits, or turns
// unhealthy, within its monitor window (AvailableAfter) is a failure; the
// leader watches each through that window (Watched, in its memory). When
// the failures exceed maxFailureRatio × replicas, or a node reports the
// rollout past its progress deadline, the rollout has failed, and with
// rollback the decision rolls every slot back to the completed template:
// it decides as if the spec named that template, so every step keeps the
// bounds of any other. It never writes the spec; while the spec names the
// failed template, the slots stay on the completed one. A rollback that
// fails in turn (failures of the restored template past the ratio, or
// not done within the progress deadline) holds where it is, as a pause,
// and is never rolled back again.
//
// It does not decide what pause does: a rollout of containers that never
// become available stops by itself (roll waits for them).

import (
	"fmt"
	"time"
)

// Watched is a new container of the template being rolled to, watched
// through its monitor window: where it runs, and when it started.
// Failed: counted as a failure already, kept while it is reported so that
// it counts once.
type Watched struct {
	Slot      int
	Node      string
	Hash      string
	StartedAt time.Time
	Failed    bool
}

// RollbackStep is what one decision did of a rollback.
type RollbackStep string

// The steps of a rollback.
const (
	// RollbackStarted: the rollout failed, and the slots go back.
	RollbackStarted RollbackStep = "started"
	// RollbackDone: every replica runs the restored template, available.
	RollbackDone RollbackStep = "done"
	// RollbackFailed: the rollback failed; it holds where it is.
	RollbackFailed RollbackStep = "failed"
)

// rollout keeps the rollout record, counts the failures, decides whether
// a rollback starts, ends or fails, and sets the template the decision
// rolls to: the spec's, or the completed one while rolling back. It runs
// first, on the assignments as read.
func (d *decision) rollout() {
	rec := d.in.Rollout
	c := d.c
	if rec.FailedHash != "" && rec.FailedHash != c.Hash {
		// a new template in the spec: a new rollout
		rec.FailedRevision, rec.FailedNumber, rec.FailedHash, rec.Reason = 0, 0, "", ""
		rec.RollbackSince, rec.RolledBack, rec.RollbackFailed = time.Time{}, false, false
	}
	back := rec.RollingBack(c.Hash)
	target := c.Hash
	if back {
		target = rec.CompletedHash
	}
	if rec.TargetHash != target {
		rec.TargetHash, rec.Failures = target, 0
	}
	if back || target != rec.CompletedHash {
		rec.Failures += d.countFailures(target)
	} else {
		// no rollout under way: a crash of the completed template is the
		// crash loop's business, not a rollout's
		rec.Failures = 0
	}
	failed := float64(rec.Failures) > c.MaxFailureRatio*float64(c.Replicas)
	switch {
	case back && !rec.RolledBack && !rec.RollbackFailed:
		deadline := rec.RollbackSince.Add(c.ProgressDeadline)
		if failed || !d.in.Now.Before(deadline) {
			rec.RollbackFailed = true
			d.r.Rollback = RollbackFailed
		} else {
			d.r.recheck(deadline.Sub(d.in.Now))
		}
	case !back && c.Rollback && !c.OnDelete && !c.Paused && rec.CompletedHash != "" && rec.CompletedHash != c.Hash &&
		(failed || d.in.DeadlineExceeded):
		rec.Reason = "progress deadline exceeded"
		if failed {
			rec.Reason = failureReason(rec.Failures, c)
		}
		rec.FailedRevision, rec.FailedNumber, rec.FailedHash = c.Revision, c.Number, c.Hash
		rec.RollbackSince, rec.TargetHash, rec.Failures = d.in.Now, rec.CompletedHash, 0
		d.r.Rollback = RollbackStarted
		back = true
		d.r.recheck(c.ProgressDeadline)
	}
	if back {
		c.Revision, c.Hash, c.Number = rec.CompletedRevision, rec.CompletedHash, rec.CompletedNumber
		if rec.RollbackFailed {
			c.Paused = true
		}
	}
	if d.complete() {
		switch {
		case !back:
			rec.CompletedRevision, rec.CompletedNumber, rec.CompletedHash = c.Revision, c.Number, c.Hash
		case !rec.RolledBack && !rec.RollbackFailed:
			rec.RolledBack = true
			d.r.Rollback = RollbackDone
		}
	}
	d.r.Rollout = rec
}

// failureReason says how many new containers failed, against the bound.
func failureReason(failures int, c *Controller) string {
	return fmt.Sprintf("%d new container(s) failed within their monitor window, more than maxFailureRatio %g of %d replicas", failures, c.MaxFailureRatio, c.Replicas)
}

// countFailures watches the new containers of template hash through their
// monitor window, keeps the record in the result, and returns how many
// failed since the last decision: one reported unhealthy within its
// window, and one watched that is no longer reported live while its slot's
// assignment still wants it (same node, same template, not ordered
// replaced) on a node that is alive and reports.
func (d *decision) countFailures(hash string) int {
	window := d.c.AvailableAfter
	watched := map[string]Watched{}
	failures := 0
	for _, cts := range d.live {
		for _, ct := range cts {
			if ct.ID == "" || ct.Hash != hash || ct.StartedAt.IsZero() {
				continue
			}
			w, was := d.in.Watched[ct.ID]
			ran := d.in.Now.Sub(ct.StartedAt)
			// watched until its node's engine vouches for the window: an
			// exit it reports late is still a failure
			within := ran < window || window > 0 && !ct.Monitored
			switch {
			case w.Failed:
				watched[ct.ID] = w
			case ct.Unhealthy && (was || within):
				failures++
				watched[ct.ID] = Watched{Slot: ct.Slot, Node: ct.Node, Hash: ct.Hash, StartedAt: ct.StartedAt, Failed: true}
			case within:
				watched[ct.ID] = Watched{Slot: ct.Slot, Node: ct.Node, Hash: ct.Hash, StartedAt: ct.StartedAt}
				d.r.recheck(window - ran)
			}
		}
	}
	for id, w := range d.in.Watched {
		if _, still := watched[id]; still || w.Failed || w.Hash != hash || d.liveID(w.Slot, id) {
			continue
		}
		a, ok := d.in.Assigned[w.Slot]
		_, reports := d.in.Reports[w.Node]
		if ok && a.Node == w.Node && a.Hash == w.Hash && a.Replace != id && d.alive(w.Node) && reports {
			failures++
		}
	}
	d.r.Watched = watched
	return failures
}

// liveID reports whether a live container of that id is reported in slot.
func (d *decision) liveID(slot int, id string) bool {
	for _, ct := range d.live[slot] {
		if ct.ID == id {
			return true
		}
	}
	return false
}

// complete reports whether the rollout to the decision's template is
// complete: replicas slots, each assigned it and available, and no live
// container of another template anywhere.
func (d *decision) complete() bool {
	if len(d.next) != d.c.Replicas {
		return false
	}
	for slot, a := range d.next {
		if a.Hash != d.c.Hash || !d.available(slot) {
			return false
		}
	}
	for _, cts := range d.live {
		for _, ct := range cts {
			if ct.Hash != d.c.Hash {
				return false
			}
		}
	}
	return true
}
