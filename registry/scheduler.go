package registry

// This file is the leader's work over several Docker hosts (DESIGN.md
// section 8). The Scheduler mirrors four prefixes of etcd (the specs, the
// nodes, the assignments and the nodes' reports), and whenever one
// changes it runs a pass: schedule (schedule.go, pure) decides which slots
// go where, the changes are written in compare-and-swap transactions, and
// the status of every controller whose reports changed is merged
// (merge.go, pure) and written. The leader also keeps each controller's
// history of templates. It never talks to Docker: the nodes do.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// DefaultNodeGrace is --node-grace's default: how long a node may be gone
// before its slots move.
const DefaultNodeGrace = 30 * time.Second

// SchedulerOptions tune a Scheduler. Zero values take the defaults.
type SchedulerOptions struct {
	// NodeGrace is how long a node may be gone before its slots move.
	NodeGrace time.Duration
	// SyncPeriod is how often every status is written even without a
	// change, so that lastSyncTime tells a live leader from a dead one.
	SyncPeriod  time.Duration
	EtcdTimeout time.Duration
	MaxReplicas int
	Policy      api.SecurityPolicy
	// RevisionHistoryLimit is how many templates are kept per controller.
	RevisionHistoryLimit int
	// Guard holds the comparisons every assignment write must pass: this
	// manager still leads. Empty when there is no election.
	Guard []clientv3.Cmp
}

func (o SchedulerOptions) withDefaults() SchedulerOptions {
	if o.NodeGrace <= 0 {
		o.NodeGrace = DefaultNodeGrace
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.EtcdTimeout <= 0 {
		o.EtcdTimeout = DefaultEtcdTimeout
	}
	if o.MaxReplicas <= 0 {
		o.MaxReplicas = api.DefaultMaxReplicas
	}
	if o.RevisionHistoryLimit <= 0 {
		o.RevisionHistoryLimit = DefaultRevisionHistoryLimit
	}
	return o
}

// Scheduler assigns slots to nodes and writes one status per controller.
// Exactly one runs at a time: the leader's.
type Scheduler struct {
	store  *Store
	logger *slog.Logger
	opts   SchedulerOptions
	now    func() time.Time

	// mu guards what the mirrors fill in, read by the loop.
	mu            sync.Mutex
	specs         map[string]*schedSpec
	nodes         map[string]*nodeState
	assignments   map[string]map[int]slotAssignment
	reports       map[string]map[string]*api.NodeReport
	listed        map[string]bool // prefixes listed at least once
	scheduleDirty bool
	statusDirty   map[string]bool
	// waiting are the controllers whose slots move off nodes that no
	// longer match their selector, a few at a time: a report on one of
	// them may let the next move.
	waiting map[string]bool
	kick    chan struct{}

	// the loop's own
	started       time.Time
	unschedulable map[string]unschedulable
	statuses      map[string]*api.ReplicationControllerStatus
	recorded      map[string]string // newest template hash in each history
}

// schedSpec is a spec as the scheduler keeps it, validated once.
type schedSpec struct {
	spec    Spec
	ctl     schedController
	invalid error
	hash    string
}

// nodeState is a node as the scheduler knows it.
type nodeState struct {
	node      api.Node
	alive     bool
	goneSince time.Time
}

// NewScheduler returns a Scheduler; Run starts it.
func NewScheduler(store *Store, logger *slog.Logger, opts SchedulerOptions) *Scheduler {
	return &Scheduler{
		store: store, logger: logger, opts: opts.withDefaults(), now: time.Now,
		specs: map[string]*schedSpec{}, nodes: map[string]*nodeState{},
		assignments: map[string]map[int]slotAssignment{}, reports: map[string]map[string]*api.NodeReport{},
		listed: map[string]bool{}, statusDirty: map[string]bool{}, kick: make(chan struct{}, 1),
		unschedulable: map[string]unschedulable{}, statuses: map[string]*api.ReplicationControllerStatus{},
		recorded: map[string]string{},
	}
}

// Run schedules until ctx ends; it returns nil then, and the error that
// ended it otherwise (etcd refusing this manager).
func (s *Scheduler) Run(ctx context.Context) error {
	s.started = s.now()
	if err := s.readRegistry(ctx); err != nil {
		return unlessStopped(ctx, err)
	}
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	var mirrors sync.WaitGroup
	defer mirrors.Wait()
	for prefix, target := range s.targets() {
		mirrors.Go(func() {
			if err := s.store.mirror(runCtx, prefix, target, s.logger.Warn); err != nil {
				fail(err)
			}
		})
	}

	ticker := time.NewTicker(s.opts.SyncPeriod)
	defer ticker.Stop()
	recheck := time.NewTimer(time.Hour)
	defer recheck.Stop()
	for {
		select {
		case <-runCtx.Done():
			fail(nil)
			mirrors.Wait()
			return unlessStopped(ctx, context.Cause(runCtx))
		case <-s.kick:
		case <-ticker.C:
			s.markAll()
		case <-recheck.C:
			s.markSchedule()
		}
		if after := s.pass(runCtx); after > 0 {
			recheck.Reset(after)
		}
	}
}

// readRegistry reads the statuses and the newest recorded template of
// every controller, so that a new leader carries on where the last one
// stopped: the creation times and the conditions' transition times stay,
// and only templates that are new are recorded.
func (s *Scheduler) readRegistry(ctx context.Context) error {
	return retryEtcd(ctx, s.logger, "reading the statuses and history from etcd failed; retrying", func() error {
		readCtx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
		defer cancel()
		statuses, err := s.store.ListStatuses(readCtx)
		if err != nil {
			return err
		}
		newest, err := s.store.newestRevisions(readCtx)
		if err != nil {
			return err
		}
		s.statuses = statuses
		s.mu.Lock()
		for id := range statuses {
			s.statusDirty[id] = true // rewritten, or forgotten if its controller is gone
		}
		s.mu.Unlock()
		for id, r := range newest {
			s.recorded[id] = r.TemplateHash
		}
		return nil
	})
}

func (s *Scheduler) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Scheduler) markSchedule() {
	s.mu.Lock()
	s.scheduleDirty = true
	s.mu.Unlock()
}

// markAll makes every controller's status due, for the periodic write.
func (s *Scheduler) markAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scheduleDirty = true
	for id := range s.specs {
		s.statusDirty[id] = true
	}
}

// pass schedules if anything placement depends on changed, writes the
// statuses that are due, and returns when to look again for a node whose
// grace runs out (0: no need).
func (s *Scheduler) pass(ctx context.Context) time.Duration {
	s.mu.Lock()
	if len(s.listed) < mirroredPrefixes {
		s.mu.Unlock()
		return 0
	}
	var in *scheduleInput
	if s.scheduleDirty {
		s.scheduleDirty = false
		in = s.scheduleInputLocked()
	}
	s.mu.Unlock()

	var recheck time.Duration
	if in != nil {
		res := schedule(*in)
		recheck = res.recheckAfter
		s.write(ctx, res.changes)
		s.setUnschedulable(res.unschedulable)
		s.mu.Lock()
		s.waiting = res.waiting
		s.mu.Unlock()
	}
	s.writeStatuses(ctx)
	return recheck
}

// scheduleInputLocked copies what schedule needs.
func (s *Scheduler) scheduleInputLocked() *scheduleInput {
	in := &scheduleInput{
		controllers: make([]schedController, 0, len(s.specs)),
		nodes:       make(map[string]*schedNode, len(s.nodes)),
		assignments: make(map[string]map[int]slotAssignment, len(s.assignments)),
		now:         s.now(), grace: s.opts.NodeGrace,
	}
	for _, id := range slices.Sorted(maps.Keys(s.specs)) {
		ctl := s.specs[id].ctl
		ctl.worth = slotWorth(s.reports[id], s.specs[id].hash)
		for node, r := range s.reports[id] {
			for _, slot := range r.BlockedSlots {
				if ctl.blocked == nil {
					ctl.blocked = map[int]map[string]bool{}
				}
				if ctl.blocked[slot] == nil {
					ctl.blocked[slot] = map[string]bool{}
				}
				ctl.blocked[slot][node] = true
			}
		}
		in.controllers = append(in.controllers, ctl)
	}
	holding := map[string]bool{} // nodes with an assignment
	for id, slots := range s.assignments {
		in.assignments[id] = maps.Clone(slots)
		for _, a := range slots {
			holding[a.node] = true
		}
	}
	for name, n := range s.nodes {
		if !n.alive && !holding[name] && in.now.Sub(n.goneSince) >= s.opts.NodeGrace {
			delete(s.nodes, name) // gone for good, and nothing left of it
			continue
		}
		in.nodes[name] = &schedNode{name: name, labels: n.node.Labels, alive: n.alive, goneSince: n.goneSince}
	}
	for name := range holding {
		if _, ok := in.nodes[name]; !ok {
			// assigned to a node this leader never saw: gone since it
			// began to lead, so that it gets the whole grace
			in.nodes[name] = &schedNode{name: name, goneSince: s.started}
		}
	}
	return in
}

// write writes the changes of a pass and applies those etcd took to the
// local copy at once, so that the next pass compares the right revisions.
func (s *Scheduler) write(ctx context.Context, changes []assignChange) {
	if len(changes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout+time.Duration(len(changes)/assignmentBatch)*time.Second)
	defer cancel()
	written, err := s.store.writeAssignments(ctx, changes, s.opts.Guard)
	s.mu.Lock()
	for i, rev := range written {
		c := changes[i]
		s.statusDirty[c.id] = true
		if c.node == "" {
			delete(s.assignments[c.id], c.slot)
			continue
		}
		if s.assignments[c.id] == nil {
			s.assignments[c.id] = map[int]slotAssignment{}
		}
		if cur, ok := s.assignments[c.id][c.slot]; !ok || cur.rev < rev {
			s.assignments[c.id][c.slot] = slotAssignment{node: c.node, rev: rev}
		}
	}
	if err != nil {
		s.scheduleDirty = true // the mirrors bring what changed; try again then
	}
	s.mu.Unlock()
	switch {
	case err == nil:
		s.logger.Debug("assignments written", "changes", len(changes))
	case ctx.Err() != nil:
		// stopping: the next leader schedules again
	case errors.Is(err, ErrAssignmentConflict):
		// the watch brings what changed, and with it the next pass
		s.logger.Info("some assignments changed under this pass; scheduling again", "err", err)
	default:
		s.logger.Warn("writing assignments failed; retrying", "err", err)
		time.AfterFunc(time.Second, s.wake)
	}
}

// setUnschedulable keeps the pass's unschedulable slots and marks the
// controllers whose set changed.
func (s *Scheduler) setUnschedulable(now map[string]unschedulable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, u := range now {
		if old, ok := s.unschedulable[id]; !ok || old.reason != u.reason || !slices.Equal(old.slots, u.slots) {
			s.statusDirty[id] = true
		}
	}
	for id := range s.unschedulable {
		if _, ok := now[id]; !ok {
			s.statusDirty[id] = true
		}
	}
	s.unschedulable = now
}

// slotWorth ranks each reported slot's container for a scale-down.
func slotWorth(reports map[string]*api.NodeReport, hash string) map[int]int {
	if len(reports) == 0 {
		return nil
	}
	worth := map[int]int{}
	for _, r := range reports {
		for _, t := range r.Tasks {
			w := slotNotReady
			switch {
			case t.State != api.StateRunning:
				w = slotMissing
			case t.Health != api.HealthNone && t.Health != api.HealthHealthy:
			case t.TemplateHash != hash:
				w = slotOutdated
			default:
				w = slotReady
			}
			if t.Slot > 0 {
				worth[t.Slot] = max(worth[t.Slot], w)
			}
		}
	}
	return worth
}

// statusChunk bounds the statuses one pass writes: the rest wait for the
// next pass, so that a node's death or a scale waits behind at most one
// chunk of a periodic rewrite, not behind all of them.
const statusChunk = 1000

// writeStatuses merges and writes the statuses that are due, a chunk at a
// time in transactions of statusBatch, and forgets controllers that are
// gone with their last report.
func (s *Scheduler) writeStatuses(ctx context.Context) {
	s.mu.Lock()
	type job struct {
		id      string
		spec    *schedSpec
		reports []*api.NodeReport
		unsched *unschedulable
		pending bool // assignments or reports remain
	}
	jobs := make([]job, 0, min(len(s.statusDirty), statusChunk))
	for id := range s.statusDirty {
		if len(jobs) == statusChunk {
			break
		}
		delete(s.statusDirty, id)
		j := job{id: id, spec: s.specs[id]}
		for _, node := range slices.Sorted(maps.Keys(s.reports[id])) {
			j.reports = append(j.reports, s.reports[id][node])
		}
		if u, ok := s.unschedulable[id]; ok {
			j.unsched = &u
		}
		j.pending = len(j.reports) > 0 || len(s.assignments[id]) > 0
		jobs = append(jobs, j)
	}
	more := len(s.statusDirty) > 0
	s.mu.Unlock()
	if more {
		s.wake() // the next chunk, after whatever else is due
	}

	var failed []string
	var writes []*api.ReplicationControllerStatus
	for _, j := range jobs {
		var err error
		switch {
		case j.spec == nil && !j.pending:
			err = s.forget(ctx, j.id)
		case j.spec == nil:
			// its containers are still going: the status stays until the last
		default:
			var st *api.ReplicationControllerStatus
			st, err = s.nextStatus(ctx, j.id, j.spec, j.reports, j.unsched)
			if st != nil {
				writes = append(writes, st)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return // stopping: the next leader writes them
			}
			failed = append(failed, j.id)
			s.logger.Warn("writing a controller's status failed; retrying", "controller", j.id, "err", err)
		}
	}
	written, err := s.store.putStatuses(ctx, writes, s.opts.EtcdTimeout)
	for _, st := range written {
		s.statuses[st.ID] = st
	}
	if err != nil && ctx.Err() == nil {
		s.logger.Warn("writing statuses failed; retrying", "statuses", len(writes)-len(written), "err", err)
		for _, st := range writes[len(written):] {
			failed = append(failed, st.ID)
		}
	}
	if len(failed) > 0 {
		s.mu.Lock()
		for _, id := range failed {
			s.statusDirty[id] = true
		}
		s.mu.Unlock()
		time.AfterFunc(time.Second, s.wake)
	}
}

// nextStatus merges the status of one controller, and records its
// template if it is new. It returns the status to write, or nil when the
// last one written still holds and is not due for its periodic rewrite.
func (s *Scheduler) nextStatus(ctx context.Context, id string, sp *schedSpec, reports []*api.NodeReport, unsched *unschedulable) (*api.ReplicationControllerStatus, error) {
	in := mergeInput{
		id: id, invalid: sp.invalid, undecodable: sp.spec.Err != nil, revision: sp.spec.ModRevision,
		reports: reports, unschedulable: unsched, last: s.statuses[id], now: s.now(),
	}
	if sp.invalid == nil {
		in.spec = sp.spec.Controller
	}
	st := mergeStatus(in)
	if sp.invalid == nil && s.recorded[id] != sp.hash {
		ctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
		defer cancel()
		if err := s.recordRevision(ctx, id, sp); err != nil {
			return nil, err
		}
	}
	if last := s.statuses[id]; last != nil && sameStatus(*last, st) && in.now.Sub(last.LastSyncTime) < s.opts.SyncPeriod {
		return nil, nil
	}
	st.LastSyncTime = in.now.UTC()
	return &st, nil
}

// recordRevision records a template the controller rolls to for the first
// time, and keeps the newest RevisionHistoryLimit.
func (s *Scheduler) recordRevision(ctx context.Context, id string, sp *schedSpec) error {
	rev := &api.Revision{Revision: sp.spec.ModRevision, FirstSeen: s.now().UTC(), TemplateHash: sp.hash,
		TaskTemplate: sp.spec.Controller.DesiredState.TaskTemplate}
	if err := s.store.PutRevision(ctx, id, rev); err != nil {
		return err
	}
	first := s.recorded[id] == ""
	s.recorded[id] = sp.hash
	if first {
		return nil
	}
	return s.store.DeleteRevisions(ctx, id, s.opts.RevisionHistoryLimit)
}

// forget removes the status and history of a controller that is gone.
func (s *Scheduler) forget(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
	defer cancel()
	if err := s.store.DeleteRevisions(ctx, id, 0); err != nil {
		return err
	}
	if err := s.store.DeleteStatus(ctx, id); err != nil {
		return err
	}
	delete(s.statuses, id)
	delete(s.recorded, id)
	return nil
}

// mirroredPrefixes is how many prefixes targets returns.
const mirroredPrefixes = 4

// targets are the prefixes the scheduler mirrors.
func (s *Scheduler) targets() map[string]mirrorTarget {
	return map[string]mirrorTarget{
		s.store.ControllersPrefix(): mirrorFuncs{s.resetSpecs, s.putSpec, s.delSpec},
		s.store.NodesPrefix():       mirrorFuncs{s.resetNodes, s.putNode, s.delNode},
		s.store.AssignmentsPrefix(): mirrorFuncs{s.resetAssignments, s.putAssignment, s.delAssignment},
		s.store.ReportsPrefix():     mirrorFuncs{s.resetReports, s.putReport, s.delReport},
	}
}

// mirrorFuncs is a mirrorTarget made of three functions.
type mirrorFuncs struct {
	onReset func([]kv, int64)
	onPut   func(kv)
	onDel   func(string, int64)
}

func (m mirrorFuncs) reset(keys []kv, rev int64) { m.onReset(keys, rev) }
func (m mirrorFuncs) put(k kv)                   { m.onPut(k) }
func (m mirrorFuncs) del(key string, rev int64)  { m.onDel(key, rev) }

// changed records that prefix changed under s.mu and wakes the loop.
func (s *Scheduler) changed(prefix string, schedule bool, ids ...string) {
	s.listed[prefix] = true
	s.scheduleDirty = s.scheduleDirty || schedule
	for _, id := range ids {
		s.statusDirty[id] = true
	}
	s.wake()
}

func (s *Scheduler) resetSpecs(keys []kv, _ int64) {
	specs := make(map[string]*schedSpec, len(keys))
	for _, k := range keys {
		if sp := s.decodeSpec(k); sp != nil {
			specs[sp.spec.ID] = sp
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.specs {
		s.statusDirty[id] = true // gone, or to be written anyway
	}
	s.specs = specs
	s.changed(s.store.ControllersPrefix(), true, slices.Collect(maps.Keys(specs))...)
}

func (s *Scheduler) putSpec(k kv) {
	sp := s.decodeSpec(k)
	if sp == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs[sp.spec.ID] = sp
	s.changed(s.store.ControllersPrefix(), true, sp.spec.ID)
}

func (s *Scheduler) delSpec(key string, _ int64) {
	if !s.store.IsControllerKey(key) {
		return
	}
	id := strings.TrimPrefix(key, s.store.ControllersPrefix())
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.specs, id)
	s.changed(s.store.ControllersPrefix(), true, id)
}

// decodeSpec decodes and validates a spec key; nil for a key that is not a
// controller.
func (s *Scheduler) decodeSpec(k kv) *schedSpec {
	if !s.store.IsControllerKey(k.key) {
		return nil
	}
	spec := s.store.decodeSpec(k.key, k.value, k.modRev, k.createRev)
	sp := &schedSpec{spec: spec, ctl: schedController{id: spec.ID, frozen: true}}
	switch {
	case spec.Err != nil:
		sp.invalid = spec.Err
	default:
		sp.invalid = api.Validate(spec.Controller, api.ValidateOptions{Key: spec.ID, MaxReplicas: s.opts.MaxReplicas, Policy: s.opts.Policy})
	}
	if sp.invalid != nil {
		return sp
	}
	ds := &spec.Controller.DesiredState
	sp.hash = api.TemplateHash(&ds.TaskTemplate)
	_, unavailable := ds.Strategy().Bounds(ds.Replicas)
	sp.ctl = schedController{id: spec.ID, replicas: ds.Replicas, selector: ds.NodeSelector, ports: hostPorts(&ds.TaskTemplate),
		maxMoving: unavailable}
	return sp
}

func (s *Scheduler) resetNodes(keys []kv, _ int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if n := s.decodeNode(k); n != nil {
			seen[n.Name] = true
			s.nodes[n.Name] = &nodeState{node: *n, alive: true}
		}
	}
	for name, n := range s.nodes {
		if !seen[name] && n.alive {
			n.alive, n.goneSince = false, s.now()
		}
	}
	s.changed(s.store.NodesPrefix(), true)
}

func (s *Scheduler) putNode(k kv) {
	n := s.decodeNode(k)
	if n == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.nodes[n.Name]; !ok || !old.alive {
		s.logger.Info("node registered", "node", n.Name, "labels", api.FormatLabels(n.Labels), "engine", n.EngineID)
	}
	s.nodes[n.Name] = &nodeState{node: *n, alive: true}
	s.changed(s.store.NodesPrefix(), true)
}

func (s *Scheduler) delNode(key string, _ int64) {
	name := strings.TrimPrefix(key, s.store.NodesPrefix())
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.nodes[name]; ok && n.alive {
		n.alive, n.goneSince = false, s.now()
		s.logger.Warn("node gone; its slots move if it is not back within the grace period", "node", name, "grace", s.opts.NodeGrace)
	}
	s.changed(s.store.NodesPrefix(), true)
}

func (s *Scheduler) decodeNode(k kv) *api.Node {
	name := strings.TrimPrefix(k.key, s.store.NodesPrefix())
	var n api.Node
	if err := json.Unmarshal(k.value, &n); err != nil || n.Name != name {
		s.logger.Warn("node registration does not decode, or names another node; ignored", "key", k.key, "err", err)
		return nil
	}
	return &n
}

func (s *Scheduler) resetAssignments(keys []kv, _ int64) {
	all := map[string]map[int]slotAssignment{}
	for _, k := range keys {
		if id, slot, ok := s.store.parseAssignmentKey(k.key); ok {
			if all[id] == nil {
				all[id] = map[int]slotAssignment{}
			}
			all[id][slot] = slotAssignment{node: string(k.value), rev: k.modRev}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assignments = all
	s.changed(s.store.AssignmentsPrefix(), true)
}

func (s *Scheduler) putAssignment(k kv) {
	id, slot, ok := s.store.parseAssignmentKey(k.key)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.assignments[id] == nil {
		s.assignments[id] = map[int]slotAssignment{}
	}
	if cur, ok := s.assignments[id][slot]; ok && cur.rev >= k.modRev {
		s.listed[s.store.AssignmentsPrefix()] = true
		return // the echo of this leader's own write, applied already
	}
	s.assignments[id][slot] = slotAssignment{node: string(k.value), rev: k.modRev}
	s.changed(s.store.AssignmentsPrefix(), true, id)
}

func (s *Scheduler) delAssignment(key string, _ int64) {
	id, slot, ok := s.store.parseAssignmentKey(key)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.assignments[id][slot]; !ok {
		return // applied already
	}
	delete(s.assignments[id], slot)
	if len(s.assignments[id]) == 0 {
		delete(s.assignments, id)
	}
	s.changed(s.store.AssignmentsPrefix(), true, id)
}

func (s *Scheduler) resetReports(keys []kv, _ int64) {
	all := map[string]map[string]*api.NodeReport{}
	for _, k := range keys {
		if id, r := s.decodeReport(k); r != nil {
			if all[id] == nil {
				all[id] = map[string]*api.NodeReport{}
			}
			all[id][r.Node] = r
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Collect(maps.Keys(s.reports))
	s.reports = all
	s.changed(s.store.ReportsPrefix(), true, append(ids, slices.Collect(maps.Keys(all))...)...)
}

func (s *Scheduler) putReport(k kv) {
	id, r := s.decodeReport(k)
	if r == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reports[id] == nil {
		s.reports[id] = map[string]*api.NodeReport{}
	}
	var before []int
	if old := s.reports[id][r.Node]; old != nil {
		before = old.BlockedSlots
	}
	s.reports[id][r.Node] = r
	// slot names taken on a node change where its slots may go, and a
	// moved slot's new container may let the next move
	s.changed(s.store.ReportsPrefix(), !slices.Equal(before, r.BlockedSlots) || s.waiting[id], id)
}

func (s *Scheduler) delReport(key string, _ int64) {
	id, node, ok := s.store.parseReportKey(key)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	blocked := false
	if old := s.reports[id][node]; old != nil {
		blocked = len(old.BlockedSlots) > 0
	}
	delete(s.reports[id], node)
	if len(s.reports[id]) == 0 {
		delete(s.reports, id)
	}
	s.changed(s.store.ReportsPrefix(), blocked, id)
}

func (s *Scheduler) decodeReport(k kv) (string, *api.NodeReport) {
	id, node, ok := s.store.parseReportKey(k.key)
	var r api.NodeReport
	if !ok || json.Unmarshal(k.value, &r) != nil || r.Node != node || r.Status.ID != id {
		s.logger.Warn("node report does not decode, or names another key; ignored", "key", k.key)
		return "", nil
	}
	return id, &r
}

// NodeStat is what the leader knows of one node, for metrics.
type NodeStat struct {
	Name string
	// Alive: the node is registered (its lease lives).
	Alive bool
	// Assigned counts the slots assigned to it; Containers the containers
	// it reports.
	Assigned, Containers int
}

// NodeStats returns every node the leader knows: registered, or still
// holding assignments, by name.
func (s *Scheduler) NodeStats() []NodeStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]*NodeStat{}
	stat := func(name string) *NodeStat {
		if byName[name] == nil {
			byName[name] = &NodeStat{Name: name}
		}
		return byName[name]
	}
	for name, n := range s.nodes {
		stat(name).Alive = n.alive
	}
	for _, slots := range s.assignments {
		for _, a := range slots {
			stat(a.node).Assigned++
		}
	}
	for _, reports := range s.reports {
		for node, r := range reports {
			stat(node).Containers += len(r.Tasks)
		}
	}
	out := make([]NodeStat, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out
}
