package leader

// This file is one decision of the leader over one controller, on its
// loop: gather what decide needs from the mirrors (the spec, the
// assignments, every node's report, and the nodes with what the other
// controllers' slots take there), decide, then write the assignments that
// changed, the status when it changed and a new template into the
// history, in one guarded transaction (registry/leaderstore.go), whose
// answer the loop applies when it comes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// syncReplicationController decides controller id once and writes the
// outcome: the one path of a decision, the loop's, which took id from the
// queue. It hands the write to the batchers without waiting, and the
// batcher puts the answer in the loop's mailbox (answered); a write too
// large for a batch goes from a goroutine of its own.
func (s *ReplicationManager) syncReplicationController(ctx context.Context, id string) {
	op := s.decideController(id)
	if op == nil {
		s.finish(ctx, id, nil)
		return
	}
	s.inflight[id] = op
	if !op.w.Forget {
		if bw := s.store.Prepare(op.w, func(br registry.BatchResult) {
			s.send(func() { s.answered(ctx, op, writeResult{rev: br.Rev, err: br.Err}) })
		}); bw.Batchable() {
			op.batched = bw
			op.changes = op.w.Changes // Prepare set their Data: the echo is known by it
			// never waits: a write in the channel is in flight, and it
			// holds as many as may be (Workers)
			s.term.writes <- bw
			return
		}
	}
	s.term.async.Go(func() {
		r := s.writeAlone(ctx, op)
		s.send(func() { s.answered(ctx, op, r) })
	})
}

// inflightWrite is one controller's decision whose write is in flight.
type inflightWrite struct {
	id  string
	rec *leaderRecord
	// sp and before are the spec and the assignments decided from (and
	// revision the template's), res the decision, and w its write.
	sp       *schedSpec
	before   map[int]decide.Assignment
	revision int64
	res      decide.Result
	w        registry.LeaderWrite
	// prune: w records a template that is not the controller's first, and
	// the history is pruned once it is written, keeping the templates
	// named: those the assignments hold after w.
	prune bool
	named map[string]bool
	// batched is w prepared for the batchers; nil: it goes alone.
	batched *registry.BatchedWrite
	// changes are the assignment changes of a batched write, with the
	// values it puts.
	changes []registry.AssignChange
	// echoed: the watch brought a key of it before its answer came.
	echoed bool
}

// writeResult is the answer to a write.
type writeResult struct {
	rev int64
	err error
	// revs are the revisions that wrote each change of a write made in
	// parts (0: not written); nil when one transaction wrote them all, at
	// rev.
	revs []int64
	// bound is a revision no later than which the write went in, if it
	// did: for an answer that does not say (a timeout).
	bound int64
	// pruneErr is the pruning's, after a write that went in.
	pruneErr error
	// followed: what follows the write in etcd is done (followUp).
	followed bool
}

// decideController makes the decision of id from the mirrors, and returns
// it with its write; nil when there is nothing to write (or the mirrors
// are not listed yet: the first lists queue everything again; or the
// nodes are not applied up to the spec yet: that queues it again). The
// placements of the write count in the loads ("assumed") until its answer
// comes.
func (s *ReplicationManager) decideController(id string) *inflightWrite {
	if !s.ready() {
		return nil
	}
	if sp := s.specs[id]; sp != nil && s.behindView(id, sp.spec.ModRevision) {
		return nil // decided once the nodes are applied up to the spec (viewrev.go)
	}
	inputs := s.inputsOf(id)
	if s.unchanged(id, inputs) {
		return nil // calm, and nothing changed since (calm.go)
	}
	in, sp, reports := s.input(id)
	rec := s.record(id)
	rec.calm = nil
	if sp == nil && len(in.Assigned) == 0 && len(reports) == 0 {
		// gone with its last assignment and report
		delete(s.wanting, id)
		if len(s.undecodable[id]) > 0 {
			return &inflightWrite{id: id, rec: rec, w: registry.LeaderWrite{ID: id, Changes: s.overwriteUndecodable(id, nil)}}
		}
		if rec.status == nil && rec.recorded == "" {
			delete(s.records, id)
			delete(s.releasing, id)
			return nil
		}
		return &inflightWrite{id: id, rec: rec, w: registry.LeaderWrite{ID: id, Forget: true}}
	}
	// each decision is made from the loads the decisions before it left,
	// their placements assumed while their writes are in flight, as the
	// Kubernetes scheduler schedules one pod at a time and binds many. A
	// decision is tens of microseconds: 1,000 of them go by in as many
	// tens of milliseconds.
	if sp != nil && rec.recorded == sp.hash && rec.recordedRev != 0 {
		// a slot names the revision its template is kept under in the
		// history, not a later one of the same template (a scale, a
		// change of the update strategy), which the history has no
		// record of once the spec moves on
		in.Controller.Revision, in.Controller.Number = rec.recordedRev, rec.recordedNumber
	} else if sp != nil {
		in.Controller.Number = rec.recordedNumber + 1 // the number this decision records it under
	}
	s.viewBuf = s.view.forController(s.viewBuf, sp, in.Assigned, s.loads)
	in.Nodes = s.viewBuf
	in.Health = rec.health
	in.Rollout, in.Watched = rec.rollout, rec.watched
	res := decide.Decide(in)
	// kept at once, whether the write goes in or not: a write that fails
	// costs a slot one step of its backoff, never a replacement too many,
	// and a failure is counted once
	rec.health = res.Health
	if sp != nil {
		rec.rollout, rec.watched = res.Rollout, res.Watched
		s.recordRollback(id, res)
	}
	for _, r := range res.Replaced {
		s.logger.Info("ordering an unhealthy task replaced", "controller", id, "slot", r.Slot, "node", r.Node, "container", r.Container)
	}
	op := &inflightWrite{id: id, rec: rec, sp: sp, before: in.Assigned, revision: in.Controller.Revision, res: res,
		w: registry.LeaderWrite{ID: id}}
	for _, c := range res.Changes {
		ch := registry.AssignChange{ID: id, Slot: c.Slot, OldRev: c.Old.ModRev}
		if c.New != nil {
			next := assignmentOf(*c.New)
			ch.Next = &next
		}
		op.w.Changes = append(op.w.Changes, ch)
	}
	op.w.Changes = s.overwriteUndecodable(id, op.w.Changes)
	if len(res.Unschedulable) > 0 {
		s.wanting[id] = true // a node that comes or changes may take them
	} else {
		delete(s.wanting, id)
	}
	if sp != nil && sp.invalid == nil && rec.recorded != sp.hash {
		op.w.Revision = &api.Revision{Number: rec.recordedNumber + 1, Revision: sp.spec.ModRevision, FirstSeen: s.now().UTC(), TemplateHash: sp.hash,
			TaskTemplate: sp.spec.Controller.DesiredState.TaskTemplate}
		op.prune = rec.recorded != ""
		op.named = namedTemplates(in.Assigned, op.w.Changes)
		// the template a rollback would restore stays in the history,
		// which the nodes read it from
		op.named[rec.rollout.CompletedHash] = true
	}
	op.w.Status = s.status(id, sp, reports, in, res, rec.status)
	if len(op.w.Changes) == 0 && op.w.Status == nil && op.w.Revision == nil {
		s.scheduleRecheck(id, rec, res.RecheckAfter)
		if s.calm(id, sp, in, res, rec) {
			rec.calm = &inputs
		}
		return nil
	}
	s.assume(sp, in.Assigned, op.w.Changes, 1)
	return op
}

// writeAlone writes op in a transaction of its own, and what follows.
func (s *ReplicationManager) writeAlone(ctx context.Context, op *inflightWrite) writeResult {
	w := op.w
	w.Changes = slices.Clone(w.Changes) // CommitLeader sets their Data and Rev
	wctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
	rev, err := s.store.CommitLeader(wctx, s.opts.Guard, w)
	cancel()
	r := writeResult{rev: rev, err: err, revs: make([]int64, len(w.Changes))}
	for i, c := range w.Changes {
		r.revs[i] = c.Rev
	}
	return s.followUp(ctx, op, r)
}

// answered takes the answer to op's write on the loop. What must follow
// it in etcd (needsFollowUp) goes off the loop first, and comes back.
func (s *ReplicationManager) answered(ctx context.Context, op *inflightWrite, r writeResult) {
	if !r.followed && s.needsFollowUp(op, r) {
		s.term.async.Go(func() {
			r := s.followUp(ctx, op, r)
			s.send(func() { s.answered(ctx, op, r) })
		})
		return
	}
	s.wrote(r)
	s.finish(ctx, op.id, s.written(op, r))
}

// needsFollowUp reports whether op's write, answered r, needs etcd again:
// without an answer, to learn the revision it went in by at the latest;
// when it records a new template, to prune the history.
func (s *ReplicationManager) needsFollowUp(op *inflightWrite, r writeResult) bool {
	return noAnswer(op, r) || prunes(op, r)
}

// noAnswer: the write may have gone in, and what it took off a node is
// held until the reports are as of now.
func noAnswer(op *inflightWrite, r writeResult) bool {
	return r.err != nil && r.rev == 0 && len(op.w.Changes) > 0 && !errors.Is(r.err, registry.ErrNotLeader)
}

// prunes: the history is pruned after a write that went in, or may have.
func prunes(op *inflightWrite, r writeResult) bool {
	return op.prune && !errors.Is(r.err, registry.ErrNotLeader) && !errors.Is(r.err, registry.ErrAssignmentConflict) && (r.rev != 0 || r.err == nil)
}

// followUp does in etcd what must follow op's write, answered r.
func (s *ReplicationManager) followUp(ctx context.Context, op *inflightWrite, r writeResult) writeResult {
	r.followed = true
	if noAnswer(op, r) {
		bctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
		var err error
		r.bound, err = s.store.CurrentRevision(bctx)
		cancel()
		r.err = errors.Join(r.err, err)
	}
	if prunes(op, r) {
		r.pruneErr = s.pruneHistory(ctx, op.id, op.named) // as written goes on to
	}
	return r
}

// written applies the answer r to op's write, and returns the error that
// ends the decision, if any.
func (s *ReplicationManager) written(op *inflightWrite, r writeResult) error {
	id, rec, w, err := op.id, op.rec, op.w, r.err
	if s.inflight[id] == op {
		delete(s.inflight, id)
	}
	if w.Forget {
		if err != nil {
			return err
		}
		delete(s.records, id)
		delete(s.releasing, id)
		s.queue.forget(id)
		s.logger.Info("controller gone: status and history removed", "controller", id)
		return nil
	}
	s.assume(op.sp, op.before, w.Changes, -1)
	if op.echoed && errors.Is(err, registry.ErrAssignmentConflict) {
		// an echo taken for this write was another's write of the same
		// value: no other change of the watch may come to decide again
		s.queue.add(id)
	}
	if errors.Is(err, registry.ErrNotLeader) {
		return err
	}
	if r.rev == 0 && err != nil {
		for _, c := range w.Changes {
			released(op.before, c, r.bound, rec) // it may have gone in
		}
		return err
	}
	conflict := errors.Is(err, registry.ErrAssignmentConflict)
	if r.revs != nil || !conflict {
		s.applied(id, op.before, w.Changes, r.rev, r.revs, rec, op.res.Moves) // those that went in
	}
	if w.Status != nil {
		rec.status = w.Status
	}
	if w.Revision != nil {
		rec.recorded, rec.recordedRev, rec.recordedNumber = op.sp.hash, w.Revision.Revision, w.Revision.Number
	}
	if op.res.Steps > 0 {
		s.logger.Info("rollout step", "controller", id, "revision", op.revision, "slots", op.res.Steps)
	}
	if len(w.Changes) > 0 {
		s.logger.Debug("assignments written", "controller", id, "changes", len(w.Changes))
	}
	if conflict {
		// the watch brings what changed, and a decision with it
		s.logger.Info("assignments changed under a decision; deciding again", "controller", id)
		return nil
	}
	s.scheduleRecheck(id, rec, op.res.RecheckAfter)
	return r.pruneErr
}

// finish ends the loop's decision of id with err: the term ends on
// ErrNotLeader, another error decides again after a second, and the queue
// may hand id out again.
func (s *ReplicationManager) finish(ctx context.Context, id string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, registry.ErrNotLeader):
		s.logger.Warn("another manager leads now; this term ends", "controller", id)
		s.term.fail(err)
	case ctx.Err() != nil:
	default:
		s.logger.Warn("deciding a controller failed; retrying", "controller", id, "err", err)
		s.queue.after(id, time.Second)
	}
	s.queue.done(id)
}

// ownEcho applies the watch's put (put true, of value) or delete of an
// assignment key at rev when it is the echo of a batched write of this
// leader in flight, and reports whether it was. The echo queues no
// decision: the loop decides what comes next once the answer comes (at
// 10,000 new controllers, every one was decided twice, and every echo
// decoded, for nothing). Anything else (another value, a key the write
// does not hold) is a change to decide on.
func (s *ReplicationManager) ownEcho(key string, value []byte, rev int64, put bool) bool {
	id, slot, ok := s.store.ParseAssignmentKey(key)
	if !ok {
		return false
	}
	own := s.inflight[id]
	if own == nil {
		return false
	}
	for _, c := range own.changes {
		if c.Slot != slot {
			continue
		}
		if put != (c.Next != nil) || put && !bytes.Equal(c.Data, value) {
			return false
		}
		own.echoed = true
		cur, ok := s.assignments[id].Get(slot)
		switch {
		case put && (!ok || cur.Rev < rev):
			s.setAssignment(id, slot, &registry.SlotAssignment{Assignment: *c.Next, Rev: rev})
		case !put && ok && cur.Rev <= rev:
			s.setAssignment(id, slot, nil)
		}
		return true
	}
	return false
}

// applied applies written changes to the mirror at once, so that the
// next decision compares the right revisions, and records the slots taken
// off a node, with an event for each move (moves: the decision's). Each
// change went in at rev, or, when revs is not nil, at
// revs[i] (0: it did not go in).
func (s *ReplicationManager) applied(id string, before map[int]decide.Assignment, changes []registry.AssignChange, rev int64, revs []int64, rec *leaderRecord, moves []decide.Move) {
	var in []registry.AssignChange
	for i, c := range changes {
		c.Rev = rev
		if revs != nil {
			c.Rev = revs[i]
		}
		if c.Rev != 0 {
			in = append(in, c)
		}
	}
	s.recordMoves(id, before, in, moves)
	for _, c := range in {
		s.setUndecodable(id, c.Slot, 0) // compared and written over
		released(before, c, c.Rev, rec)
		if c.Next == nil {
			if cur, ok := s.assignments[id].Get(c.Slot); ok && cur.Rev <= c.Rev {
				s.setAssignment(id, c.Slot, nil)
			}
			continue
		}
		if cur, ok := s.assignments[id].Get(c.Slot); !ok || cur.Rev < c.Rev {
			s.setAssignment(id, c.Slot, &registry.SlotAssignment{Assignment: *c.Next, Rev: c.Rev})
		}
	}
	if s.pruneReleased(id, rec) {
		if rev := awaitedReports(rec, s.reportsRev); rev > 0 {
			s.reportsAsk.want(rev)
		}
	}
}

// awaitedReports returns the revision the reports must reach for every
// slot rec released to be seen released, 0 when they have: a progress
// request helps those, not one whose node's report still holds it.
func awaitedReports(rec *leaderRecord, reportsRev int64) int64 {
	var awaited int64
	for _, rel := range rec.released {
		if rel.Rev > reportsRev {
			awaited = max(awaited, rel.Rev)
		}
	}
	return awaited
}

// released records the slot c takes off a node, if it does, as released
// at rev in rec: held until the reports are as of rev. Nothing is
// recorded at rev 0 (unknown).
func released(before map[int]decide.Assignment, c registry.AssignChange, rev int64, rec *leaderRecord) {
	old, ok := before[c.Slot]
	if rev == 0 || !ok || c.Next != nil && c.Next.Node == old.Node {
		return
	}
	if rec.released == nil {
		rec.released = map[int]decide.Release{}
	}
	rec.released[c.Slot] = decide.ReleaseOf(old, rev)
}

// pruneReleased forgets the slots taken off a node that the reports show
// applied and the node's report no longer holds, and reports whether
// some are left.
func (s *ReplicationManager) pruneReleased(id string, rec *leaderRecord) bool {
	for slot, rel := range rec.released {
		if rel.Rev <= s.reportsRev && !s.reportHolds(id, rel.Node, slot) {
			delete(rec.released, slot)
		}
	}
	if len(rec.released) == 0 {
		delete(s.releasing, id)
		return false
	}
	s.releasing[id] = true
	return true
}

// reportHolds reports whether node's report of controller id holds slot:
// the node may run what a released assignment started there until its
// report lets the slot go, even once the reports are as of the release.
func (s *ReplicationManager) reportHolds(id, node string, slot int) bool {
	r := s.reports[id][node]
	return r != nil && r.slots.Has(slot)
}

// scheduleRecheck decides id again after d (0: no need).
func (s *ReplicationManager) scheduleRecheck(id string, rec *leaderRecord, d time.Duration) {
	if d <= 0 {
		return
	}
	at := s.now().Add(d)
	if !rec.recheck.IsZero() && rec.recheck.After(s.now()) && !rec.recheck.After(at) {
		return // an earlier one is due
	}
	rec.recheck = at
	s.queue.after(id, d)
}

// input gathers the decision's input but its nodes, which the decision
// takes from the view.
func (s *ReplicationManager) input(id string) (decide.Input, *schedSpec, []*api.NodeReport) {
	sp := s.specs[id]
	src := decisionSource{id: id, spec: sp, assignments: s.assignments[id], reports: s.reports[id],
		reportsRev: s.reportsRev, gone: s.heldOnGoneNodes(id), now: s.now(), grace: s.opts.NodeGrace}
	if rec := s.records[id]; rec != nil && s.pruneReleased(id, rec) {
		src.released = rec.released
	}
	in, reports := decisionInput(src)
	return in, sp, reports
}

// decisionSource is what one decision of controller id is made from: the
// leader's mirrors (input), or a dry run's simulation of them
// (dryrun.go).
type decisionSource struct {
	id string
	// spec is nil when the spec is gone.
	spec *schedSpec
	// assignments and reports (by node) are the controller's.
	assignments registry.SlotAssignments
	reports     map[string]*leaderReport
	reportsRev  int64
	// gone are the controller's containers on gone nodes without a
	// report of it, by node (leaderheld.go).
	gone     map[string][]decide.Container
	released map[int]decide.Release
	// nodes are the nodes in name order, with what the other controllers'
	// slots hold on each (nodeView.forController); the leader's decision
	// sets them later.
	nodes []decide.Node
	now   time.Time
	grace time.Duration
}

// decisionInput turns src into decide's input, and returns the reports in
// node order with it. Pure: it changes nothing in src.
func decisionInput(src decisionSource) (decide.Input, []*api.NodeReport) {
	id, sp := src.id, src.spec
	in := decide.Input{Assigned: make(map[int]decide.Assignment, src.assignments.Len()), Reports: make(map[string]decide.Report, len(src.reports)),
		ReportsRevision: src.reportsRev, Now: src.now, Grace: src.grace, Nodes: src.nodes}
	in.Controller = decide.Controller{ID: id, Gone: true}
	if sp != nil {
		in.Controller = sp.ctl
	}
	var reports []*api.NodeReport
	for _, node := range slices.Sorted(maps.Keys(src.reports)) {
		r := src.reports[node]
		reports = append(reports, &r.report)
		in.Reports[node] = decide.Report{Slots: r.slots, StartedFirst: r.startedFirst} // decide only reads them
		if in.Containers == nil {
			in.Containers = slices.Clip(r.containers) // one node's: no copy (an append makes one)
		} else {
			in.Containers = append(in.Containers, r.containers...)
		}
		for _, slot := range r.blocked {
			if in.Blocked == nil {
				in.Blocked = map[int]map[string]bool{}
			}
			if in.Blocked[slot] == nil {
				in.Blocked[slot] = map[string]bool{}
			}
			in.Blocked[slot][node] = true
		}
	}
	addGoneNodes(&in, src.gone)
	if sp != nil {
		in.DeadlineExceeded = deadlineExceeded(reports, sp.spec.ModRevision)
	}
	for slot, a := range src.assignments.All() {
		in.Assigned[slot] = decide.Assignment{Node: a.Node, Revision: a.Revision, Hash: a.TemplateHash,
			OnDelete: a.OnDelete, StartFirst: a.StartFirst, StartedFirst: a.StartedFirst, ModRev: a.Rev, Replace: a.Replace}
		if a.TemplateHash == "" && sp != nil {
			in.Assigned[slot] = bareAssignment(slot, a, sp, in.Containers)
		}
	}
	if len(src.released) > 0 {
		in.Released = maps.Clone(src.released)
	}
	return in, reports
}

// bareAssignment reads an assignment written before assignments carried
// a template (a bare node name). Its node keeps whatever container runs
// the slot (registry/nodemodel), so the slot runs the template the node reports
// there: an outdated one is rolled within the bounds like any other. One
// the node reports nothing of gets the current template.
func bareAssignment(slot int, a registry.SlotAssignment, sp *schedSpec, containers []decide.Container) decide.Assignment {
	out := decide.Assignment{Node: a.Node, Revision: sp.spec.ModRevision, Hash: sp.hash, ModRev: a.Rev}
	for _, ct := range containers {
		if ct.Slot == slot && ct.Node == a.Node && ct.Named && ct.Live && ct.Hash != "" {
			out.Revision, out.Hash = 0, ct.Hash
			if ct.Hash == sp.hash {
				out.Revision = sp.spec.ModRevision
			}
			break
		}
	}
	return out
}

// assignmentOf is the assignment the leader writes for a.
func assignmentOf(a decide.Assignment) api.Assignment {
	return api.Assignment{Node: a.Node, Revision: a.Revision, TemplateHash: a.Hash, OnDelete: a.OnDelete,
		StartFirst: a.StartFirst, StartedFirst: a.StartedFirst, Replace: a.Replace}
}

// reportedContainer is a reported container as decide counts it. A
// container listed since the node started has no start time yet (a list
// does not tell it): its creation time stands in, as in the node's own
// count.
func reportedContainer(id, node string, t api.ReportedTask) decide.Container {
	started := t.StartedAt
	if started.IsZero() {
		started = t.Created
	}
	return decide.Container{
		Node: node, Slot: t.Slot, Named: api.IsTaskName(t.Name, id, t.Slot), Hash: t.TemplateHash,
		Live: liveState(t.State), Running: t.State == api.StateRunning, Ready: t.State == api.StateRunning && (t.Health == api.HealthNone || t.Health == api.HealthHealthy),
		StartedAt: started, Monitored: t.Monitored, ID: t.ID, Unhealthy: taskUnhealthy(t),
	}
}

// taskUnhealthy reports whether Docker reports a container of the task t
// unhealthy.
func taskUnhealthy(t api.ReportedTask) bool {
	if t.Health == api.HealthUnhealthy {
		return true
	}
	for _, p := range t.Parts {
		if p.Health == api.HealthUnhealthy {
			return true
		}
	}
	return false
}

// liveState reports whether a container in state is live as decide counts
// it: running, paused, restarting, or created and about to start.
func liveState(state string) bool {
	switch state {
	case api.StateRunning, api.StatePaused, api.StateRestarting, api.StateCreated:
		return true
	}
	return false
}

// status merges the controller's status from the reports and the decision
// res made from in; nil when the last one written still holds.
func (s *ReplicationManager) status(id string, sp *schedSpec, reports []*api.NodeReport, in decide.Input, res decide.Result, last *api.ReplicationControllerStatus) *api.ReplicationControllerStatus {
	if sp == nil {
		return nil // gone: the status goes with its last container
	}
	m := mergeInput{id: id, invalid: sp.invalid, undecodable: sp.spec.Err != nil, revision: sp.spec.ModRevision,
		reports: reports, last: last, now: s.now(), images: nodeImages(s.reports[id])}
	if sp.invalid == nil {
		m.spec = sp.spec.Controller
		m.rolling = olderTemplate(in)
	}
	m.unhealthy = res.Unhealthy
	if sp.invalid == nil {
		m.hash = sp.hash
		m.rollout = statusRollout(res.Rollout)
		m.restored = restoredCount(in, res.Rollout)
	}
	if len(res.Unschedulable) > 0 {
		m.unschedulable = &unschedulable{slots: res.Unschedulable, reason: res.Reason, noNode: !anyAlive(in.Nodes)}
	}
	st := mergeStatus(m)
	if last != nil && api.SameStatus(*last, st) {
		return nil
	}
	st.LastSyncTime = m.now.UTC()
	return &st
}

// nodeImages are the image groups of reports, in node order.
func nodeImages(reports map[string]*leaderReport) []imageGroup {
	var out []imageGroup
	for _, node := range slices.Sorted(maps.Keys(reports)) {
		out = append(out, reports[node].images...)
	}
	return out
}

// anyAlive reports whether some node is registered.
func anyAlive(nodes []decide.Node) bool {
	for i := range nodes {
		if nodes[i].Alive {
			return true
		}
	}
	return false
}

// olderTemplate reports whether a slot is assigned, or a live container
// runs, a template other than the controller's: a rolling update is under
// way, not a plain scale.
func olderTemplate(in decide.Input) bool {
	for _, a := range in.Assigned {
		if a.Hash != in.Controller.Hash {
			return true
		}
	}
	for _, c := range in.Containers {
		if c.Live && c.Hash != in.Controller.Hash {
			return true
		}
	}
	return false
}

// pruneHistory keeps the newest RevisionHistoryLimit templates of id,
// and every older one named, as Kubernetes keeps a ReplicaSet while it has
// replicas: a node re-creating a slot of an older template reads it there.
func (s *ReplicationManager) pruneHistory(ctx context.Context, id string, named map[string]bool) error {
	revs, err := s.store.ListRevisions(ctx, id)
	if err != nil {
		return err
	}
	extra := len(revs) - s.opts.RevisionHistoryLimit
	if extra <= 0 {
		return nil
	}
	w := registry.LeaderWrite{ID: id}
	for _, r := range revs[:extra] {
		if !named[r.TemplateHash] {
			w.Prune = append(w.Prune, r.Revision)
		}
	}
	if len(w.Prune) == 0 {
		return nil
	}
	_, err = s.store.CommitLeader(ctx, s.opts.Guard, w)
	return err
}

// namedTemplates are the template hashes of the assignments before, once
// changes are made.
func namedTemplates(before map[int]decide.Assignment, changes []registry.AssignChange) map[string]bool {
	after := make(map[int]string, len(before))
	for slot, a := range before {
		after[slot] = a.Hash
	}
	for _, c := range changes {
		if c.Next == nil {
			delete(after, c.Slot)
		} else {
			after[c.Slot] = c.Next.TemplateHash
		}
	}
	named := make(map[string]bool, len(after))
	for _, hash := range after {
		named[hash] = true
	}
	return named
}

// hostPorts returns the host ports a template publishes, as "8080/TCP".
func hostPorts(t *api.TaskTemplate) []string {
	var out []string
	for _, c := range t.DesiredState.Manifest.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				proto := strings.ToUpper(p.Protocol)
				if proto == "" {
					proto = "TCP"
				}
				out = append(out, fmt.Sprintf("%d/%s", p.HostPort, proto))
			}
		}
	}
	return out
}

// reserveOf is what a task of template t reserves on its node: the sums
// of its containers' memory and CPU shares, or an init container's own
// when it asks for more (api.ContainerManifest.Resources).
func reserveOf(t *api.TaskTemplate) decide.Resources {
	r := t.DesiredState.Manifest.Resources()
	return decide.Resources{Memory: r.Memory, CPU: r.CPU}
}
