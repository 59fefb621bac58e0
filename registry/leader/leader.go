package leader

// This file is the leader's loop. The ReplicationManager mirrors four prefixes of
// etcd (the specs, the nodes, the assignments and the nodes' reports);
// each change marks the controllers it concerns dirty, and workers decide
// one controller at a time (leadersync.go): the pure decision of package
// decide says which slots exist, which node runs each and which template
// revision it runs, and one guarded transaction writes the assignments
// that changed with the controller's status and history. A change never
// waits for a pass over the fleet; the periodic pass over every
// controller is the safety net, in a second lane behind the changes.
// The leader never talks to Docker: the nodes do.

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// DefaultLeaderWorkers is how many controllers the leader has in hand at
// once by default. The decisions themselves go one at a time (tens of
// microseconds each); what the workers bound is the writes waiting for
// etcd's disk, and with them how full a batched transaction is: at
// 10,000 new controllers over 100 nodes, 20 took 12 s to assign every
// slot, 128 took 7 s and 512 take 5 s.
const DefaultLeaderWorkers = 512

// DefaultNodeGrace is --node-grace's default: how long a node may be gone
// before its slots move.
const DefaultNodeGrace = 30 * time.Second

// Options tune a ReplicationManager. Zero values take the defaults.
type Options struct {
	// NodeGrace is how long a node may be gone before its slots move.
	NodeGrace time.Duration
	// SyncPeriod is how often every controller is decided again even
	// without a change: the safety net.
	SyncPeriod  time.Duration
	EtcdTimeout time.Duration
	MaxReplicas int
	Policy      api.SecurityPolicy
	// RevisionHistoryLimit is how many templates are kept per controller.
	RevisionHistoryLimit int
	// Workers is how many controllers are decided at once.
	Workers int
	// Guard holds the comparisons every leader write must pass: this
	// manager still leads. Empty when there is no election.
	Guard []clientv3.Cmp
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.NodeGrace <= 0 {
		o.NodeGrace = DefaultNodeGrace
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = registry.DefaultSyncPeriod
	}
	if o.EtcdTimeout <= 0 {
		o.EtcdTimeout = registry.DefaultEtcdTimeout
	}
	if o.MaxReplicas <= 0 {
		o.MaxReplicas = api.DefaultMaxReplicas
	}
	if o.RevisionHistoryLimit <= 0 {
		o.RevisionHistoryLimit = registry.DefaultRevisionHistoryLimit
	}
	if o.Workers <= 0 {
		o.Workers = DefaultLeaderWorkers
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// ReplicationManager decides every slot of every controller and writes one status
// per controller. Exactly one runs at a time: the leader's.
type ReplicationManager struct {
	store  *registry.Store
	logger *slog.Logger
	opts   Options
	now    func() time.Time

	// viewBuf holds the nodes of the decision that holds mu
	// (syncController).
	viewBuf []decide.Node
	// mu guards what the mirrors fill in and the per-controller records.
	mu          sync.Mutex
	specs       map[string]*schedSpec
	nodes       map[string]*nodeState
	assignments map[string]map[int]registry.SlotAssignment
	reports     map[string]map[string]*leaderReport
	// reportsRev is the etcd revision the reports are as of.
	reportsRev int64
	// loads are what the assigned slots use on each node, and view the
	// nodes as decisions see them, kept in step with nodes and loads.
	loads  map[string]*nodeLoad
	view   nodeView
	listed map[string]bool // prefixes listed at least once
	// records are the leader's memory of each controller.
	records map[string]*leaderRecord
	// wanting are the controllers with slots no node could take, and
	// releasing those with slots taken off a node that the reports do not
	// show applied yet (records' released).
	wanting   map[string]bool
	releasing map[string]bool
	// inflight are the assignment writes in flight, by controller (a
	// controller has one write at a time): the watch's echo of one is
	// this leader's own change, applied without deciding again (ownEcho).
	inflight map[string]*inflightWrite
	// progressWanted counts the progress requests wanted since the one in
	// flight began (requestProgress).
	progressWanted atomic.Int64
	queue          *laneQueue
	started        time.Time
	// loaded: Refresh has read the statuses and history.
	loaded bool
	// writes go to the batcher while Run runs; nil writes each alone.
	writes chan *registry.BatchedWrite
}

// schedSpec is a spec as the scheduler keeps it, validated once.
type schedSpec struct {
	spec    registry.Spec
	invalid error
	hash    string
	ctl     decide.Controller
}

// nodeState is a node as the scheduler knows it.
type nodeState struct {
	node      api.Node
	alive     bool
	goneSince time.Time
}

// leaderRecord is what the leader remembers of one controller between
// decisions; the worker holding the controller owns it.
type leaderRecord struct {
	// status is the last status written (or read at start).
	status *api.ReplicationControllerStatus
	// recorded is the newest template hash in the history.
	recorded string
	// released are the slots this leader took off a node.
	released map[int]decide.Release
	// recheck is when a decision asked to be made again.
	recheck time.Time
}

// NewReplicationManager returns a ReplicationManager; Run starts it.
func NewReplicationManager(store *registry.Store, logger *slog.Logger, opts Options) *ReplicationManager {
	opts = opts.withDefaults()
	return &ReplicationManager{
		store: store, logger: logger, opts: opts, now: opts.Now, started: opts.Now(),
		specs: map[string]*schedSpec{}, nodes: map[string]*nodeState{},
		assignments: map[string]map[int]registry.SlotAssignment{}, reports: map[string]map[string]*leaderReport{},
		loads: map[string]*nodeLoad{}, listed: map[string]bool{}, records: map[string]*leaderRecord{}, wanting: map[string]bool{}, releasing: map[string]bool{},
		inflight: map[string]*inflightWrite{}, queue: newLaneQueue(),
	}
}

// Run decides until ctx ends; it returns nil then, ErrNotLeader when a
// write found that another manager leads, and the error that ended it
// otherwise (etcd refusing this manager).
func (s *ReplicationManager) Run(ctx context.Context) error {
	s.started = s.now()
	if err := s.readRegistry(ctx); err != nil {
		return registry.UnlessStopped(ctx, err)
	}
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	var wg sync.WaitGroup
	defer wg.Wait()
	for prefix, target := range s.targets() {
		wg.Go(func() {
			watch := func() error { return s.store.Mirror(runCtx, prefix, target, s.logger.Warn) }
			if prefix == s.store.ControllersPrefix() {
				watch = func() error { return s.WatchControllers(runCtx) }
			}
			if err := watch(); err != nil {
				fail(err)
			}
		})
	}
	// the batcher outlives the workers, which wait for its answers: it
	// stops once they are done
	s.writes = make(chan *registry.BatchedWrite)
	batchCtx, stopBatches := context.WithCancel(context.WithoutCancel(runCtx))
	var batches sync.WaitGroup
	for range registry.Batchers {
		batches.Go(func() { s.store.RunBatches(batchCtx, s.opts.Guard, s.writes, s.opts.EtcdTimeout) })
	}
	defer func() {
		stopBatches()
		batches.Wait()
	}()
	for range s.opts.Workers {
		wg.Go(func() {
			for {
				id, ok := s.queue.pop(runCtx)
				if !ok {
					return
				}
				if err := s.syncReplicationController(runCtx, id); err != nil {
					switch {
					case errors.Is(err, registry.ErrNotLeader):
						s.logger.Warn("another manager leads now; this term ends", "controller", id)
						fail(err)
					case runCtx.Err() != nil:
					default:
						s.logger.Warn("deciding a controller failed; retrying", "controller", id, "err", err)
						s.queue.after(id, time.Second)
					}
				}
				s.queue.done(id)
			}
		})
	}
	ticker := time.NewTicker(s.opts.SyncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-runCtx.Done():
			fail(nil)
			s.queue.close()
			wg.Wait() // the workers are done: nothing more to batch
			stopBatches()
			batches.Wait()
			s.writes = nil // a decision after Run writes alone
			return registry.UnlessStopped(ctx, context.Cause(runCtx))
		case <-ticker.C:
			s.Synchronize()
		}
	}
}

// WatchControllers follows the specs under /registry/controllers into the
// leader's mirror until ctx ends (it then returns nil): one list, then a
// watch, again after each break. A spec that changes queues its
// controller. It returns an error only when etcd refuses this manager.
func (s *ReplicationManager) WatchControllers(ctx context.Context) error {
	prefix := s.store.ControllersPrefix()
	return s.store.Mirror(ctx, prefix, s.targets()[prefix], s.logger.Warn)
}

// Synchronize queues every controller for a decision in the periodic
// lane, behind every change: the safety net Run runs each SyncPeriod.
func (s *ReplicationManager) Synchronize() {
	s.mu.Lock()
	ids := slices.Collect(maps.Keys(s.specs))
	s.mu.Unlock()
	s.queue.later(ids...)
}

// readRegistry reads the statuses and the newest recorded template of
// every controller, so that a new leader carries on where the last one
// stopped: the creation times and the conditions' transition times stay,
// and only templates that are new are recorded.
func (s *ReplicationManager) readRegistry(ctx context.Context) error {
	return registry.RetryEtcd(ctx, s.logger, "reading the statuses and history from etcd failed; retrying", func() error {
		readCtx, cancel := context.WithTimeout(ctx, s.opts.EtcdTimeout)
		defer cancel()
		statuses, err := s.store.ListStatuses(readCtx)
		if err != nil {
			return err
		}
		newest, err := s.store.NewestRevisions(readCtx)
		if err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for id, st := range statuses {
			s.recordLocked(id).status = st
		}
		for id, r := range newest {
			s.recordLocked(id).recorded = r.TemplateHash
		}
		return nil
	})
}

// recordLocked returns id's record, making it; s.mu is held.
func (s *ReplicationManager) recordLocked(id string) *leaderRecord {
	r := s.records[id]
	if r == nil {
		r = &leaderRecord{}
		s.records[id] = r
	}
	return r
}

// ready reports whether every prefix has been listed once: before that,
// a decision could take a controller whose spec is not in yet for gone.
func (s *ReplicationManager) readyLocked() bool { return len(s.listed) == mirroredPrefixes }
