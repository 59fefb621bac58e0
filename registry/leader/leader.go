package leader

// This file is the leader's loop. The ReplicationManager mirrors five
// prefixes of etcd (the specs, the nodes, their configs, the assignments
// and the nodes' reports); the mirrors decode each change in goroutines
// of their own and send it to the loop, which applies it and marks the
// controllers it concerns dirty (a spec once the nodes are applied up to
// it: viewrev.go). The loop alone holds the leader's state, and decides
// one controller at a time (leadersync.go): the pure decision of package
// decide says which slots exist, which node runs each and which template
// revision it runs, and one guarded transaction, handed to the batchers
// without waiting, writes the assignments that changed with the
// controller's status and history; its answer comes back to the loop. A
// change never waits for a pass over the fleet; the periodic pass over
// every controller is the safety net, in a lane behind the changes. The
// leader never talks to Docker: the nodes do.

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// DefaultLeaderWorkers is how many controllers the leader has in hand at
// once by default: decided, their writes in flight. The decisions
// themselves go one at a time, on the loop (tens of microseconds each);
// what this bounds is the writes waiting for etcd's disk, and with them
// how full a batched transaction is: at
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
	// Workers is how many controllers may have a write in flight at
	// once.
	Workers int
	// Guard holds the comparisons every leader write must pass: this
	// manager still leads. Empty when there is no election.
	Guard []clientv3.Cmp
	// Clock is the time the leader runs on: its now, its rechecks and
	// its periodic pass; nil is the wall clock.
	Clock Clock
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
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	return o
}

// ReplicationManager decides every slot of every controller and writes one status
// per controller. Exactly one runs at a time: the leader's.
//
// Its state is its loop's (Run), from the start: the statuses and
// history read first, then the mirrors, decode in goroutines of their own
// and send what they decoded to the loop, the writes' answers come back
// to it, and what is asked from outside (NodeStats, Synchronize,
// CaughtUp) runs on it. A ReplicationManager runs once: one term of the
// leader's.
type ReplicationManager struct {
	store  *registry.Store
	logger *slog.Logger
	opts   Options
	now    func() time.Time

	// mailbox is the loop's, from NewReplicationManager on; ran: Run was
	// called.
	mailbox *mailbox
	ran     atomic.Bool
	// term is what the loop runs with, set before it starts.
	term *term
	// seen are the revisions each mirror has handed to the loop, by
	// prefix (caughtup.go).
	seen map[string]*atomic.Int64
	// viewAsk asks etcd where the watches of the nodes and their configs
	// are, while a decision waits for them (viewrev.go); reportsAsk where
	// the reports' watch is, while a slot taken off a node waits for its
	// release to show there (leadersync.go); caughtUpAsk where every
	// watch is, while a CaughtUp call waits (caughtup.go).
	viewAsk, reportsAsk, caughtUpAsk *progressAsker

	// The rest is the loop's.

	// viewBuf holds the nodes of the decision being made.
	viewBuf []decide.Node
	specs   map[string]*schedSpec
	nodes   map[string]*nodeState
	// configs are the nodes' configs (/registry/nodeconfig), by node.
	configs map[string]api.NodeConfig
	// assignments are each controller's, which setAssignment changes in
	// place: no value of them is kept beyond a call.
	assignments map[string]registry.SlotAssignments
	// undecodable are the ModRevisions of assignment keys whose values do
	// not decode, by controller and slot (leaderundecodable.go).
	undecodable map[string]map[int]int64
	reports     map[string]map[string]*leaderReport
	// reportsRev is the etcd revision the reports are as of.
	reportsRev int64
	// loads are what the assigned slots use on each node, and view the
	// nodes as decisions see them, kept in step with nodes and loads.
	loads  map[string]*nodeLoad
	view   nodeView
	listed map[string]bool // prefixes listed at least once
	// viewRevs are the revisions up to which the loop has applied the
	// nodes and their configs, by prefix, and behind the controllers
	// whose specs are newer, by spec revision (viewrev.go).
	viewRevs map[string]int64
	behind   map[string]int64
	// records are the leader's memory of each controller.
	records map[string]*leaderRecord
	// wanting are the controllers with slots no node could take, and
	// releasing those with slots taken off a node that the reports do not
	// show applied yet (records' released).
	wanting   map[string]bool
	releasing map[string]bool
	// inflight are the writes in flight, by controller (a controller has
	// one write at a time, and is not decided again until it is
	// answered): the watch's echo of a batched one is this leader's own
	// change, applied without deciding again (ownEcho).
	inflight map[string]*inflightWrite
	queue    *laneQueue
	// world counts the events the loop has taken in (the mirrors'
	// changes, the writes' answers): a decision made at the same count
	// saw the same mirrors (calm.go).
	world   uint64
	started time.Time
	// waiters are the CaughtUp calls waiting for the loop, and wroteRev
	// the newest revision a decision's write went in at (written by the
	// loop, read by CaughtUp too).
	waiters  []caughtUpWaiter
	wroteRev atomic.Int64
	// waiting counts the CaughtUp calls under way: while one is, a mirror
	// that hands over a change wakes the loop to answer it (caughtup.go).
	waiting atomic.Int32
	// gone are the records of gone nodes, dropped the reports deleted
	// while their node still looked registered (leadergone.go); goneOff:
	// the etcd role may not touch the records.
	gone    map[string]*goneNode
	dropped map[string]*droppedReports
	goneOff bool
	// events are the events waiting to be written (leaderevents.go).
	events chan api.Event
}

// mailbox is how the loop hears from the other goroutines.
type mailbox struct {
	// events are the mirrors' changes and the writes' answers, in the
	// order each goroutine sent them; calls are what is asked from
	// outside, each answered before its caller goes on.
	events chan func()
	calls  chan func()
	// done is closed once the loop takes nothing more.
	done chan struct{}
}

// mailboxEvents is how many events may wait for the loop before a mirror
// waits to send the next one.
const mailboxEvents = 4096

// term is what one run of the loop writes with.
type term struct {
	ctx  context.Context
	fail context.CancelCauseFunc
	// writes go to the batchers, which answer in the mailbox; it holds
	// Workers, as many as may be in flight.
	writes chan *registry.BatchedWrite
	// async are the goroutines of the etcd calls in flight off the
	// batchers: a write too large for a batch, what follows a write.
	async sync.WaitGroup
}

// send hands an event to the loop without waiting for it to be applied;
// once the loop has ended it is dropped.
func (s *ReplicationManager) send(event func()) {
	select {
	case s.mailbox.events <- event:
	case <-s.mailbox.done:
	}
}

// onLoop runs call on the loop and returns once it has run, true; it
// waits for Run to start the loop, and returns false without running call
// once the loop has ended.
func (s *ReplicationManager) onLoop(call func()) bool {
	ran := make(chan struct{})
	select {
	case s.mailbox.calls <- func() { call(); close(ran) }: // unbuffered: the loop has it, and runs it at once
		<-ran
		return true
	case <-s.mailbox.done:
		return false
	}
}

// schedSpec is a spec as the scheduler keeps it, validated once.
type schedSpec struct {
	spec    registry.Spec
	invalid error
	hash    string
	ctl     decide.Controller
}

// heldFrom gives an invalid spec the host ports and reservations of prev,
// the spec it replaces: its containers run on as they were, and hold what
// they held, so that no other controller is placed onto their ports or
// room (a bad edit moves nothing, and frees nothing either). A spec
// invalid from its first revision has no containers, and holds nothing.
func (sp *schedSpec) heldFrom(prev *schedSpec) {
	if sp.invalid == nil || prev == nil {
		return
	}
	sp.ctl.Ports, sp.ctl.Reserve = prev.ctl.Ports, prev.ctl.Reserve
}

// nodeState is a node as the scheduler knows it.
type nodeState struct {
	node      api.Node
	alive     bool
	goneSince time.Time
}

// leaderRecord is what the leader remembers of one controller between
// decisions; the loop owns it.
type leaderRecord struct {
	// status is the last status written (or read at start).
	status *api.ReplicationControllerStatus
	// recorded is the newest template hash in the history,
	// recordedRev the revision it is kept under, and recordedNumber its
	// number (api.Revision.Number), one less than the next one's.
	recorded       string
	recordedRev    int64
	recordedNumber int64
	// released are the slots this leader took off a node.
	released map[int]decide.Release
	// recheck is when a decision asked to be made again.
	recheck time.Time
	// health is the record of the slots' ill health (decide/health.go):
	// this leader's only, a new one starts without.
	health map[int]decide.Health
	// rollout is the record of the controller's rollouts
	// (decide/rollback.go), kept in the status and read from it at start;
	// watched the new containers watched through their monitor window,
	// this leader's only.
	rollout api.RolloutRecord
	watched map[string]decide.Watched
	// calm is what the last decision was made from, when it found nothing
	// to write and nothing to wait for; nil otherwise (calm.go).
	calm *leaderInputs
}

// NewReplicationManager returns a ReplicationManager; Run starts it.
func NewReplicationManager(store *registry.Store, logger *slog.Logger, opts Options) *ReplicationManager {
	opts = opts.withDefaults()
	mb := &mailbox{events: make(chan func(), mailboxEvents), calls: make(chan func()), done: make(chan struct{})}
	seen := map[string]*atomic.Int64{}
	for _, prefix := range mirrored(store) {
		seen[prefix] = &atomic.Int64{}
	}
	s := &ReplicationManager{
		store: store, logger: logger, opts: opts, now: opts.Clock.Now, started: opts.Clock.Now(), mailbox: mb, seen: seen,
		specs: map[string]*schedSpec{}, nodes: map[string]*nodeState{}, configs: map[string]api.NodeConfig{},
		assignments: map[string]registry.SlotAssignments{}, undecodable: map[string]map[int]int64{}, reports: map[string]map[string]*leaderReport{},
		loads: map[string]*nodeLoad{}, listed: map[string]bool{}, records: map[string]*leaderRecord{}, wanting: map[string]bool{}, releasing: map[string]bool{},
		viewRevs: map[string]int64{}, behind: map[string]int64{}, inflight: map[string]*inflightWrite{}, queue: newLaneQueue(opts.Clock),
		gone: map[string]*goneNode{}, dropped: map[string]*droppedReports{}, events: make(chan api.Event, eventQueue),
	}
	for _, prefix := range s.viewPrefixes() {
		s.viewRevs[prefix] = 0
	}
	s.viewAsk = newProgressAsker(s, s.viewPrefixes()...)
	s.reportsAsk = newProgressAsker(s, store.ReportsPrefix())
	s.caughtUpAsk = newProgressAsker(s, mirrored(store)...)
	return s
}

// errRanTwice is Run's answer to a second call.
var errRanTwice = errors.New("leader: a ReplicationManager runs once; make a new one for a new term")

// Run decides until ctx ends; it returns nil then, ErrNotLeader when a
// write found that another manager leads, and the error that ended it
// otherwise (etcd refusing this manager). The goroutine that calls it
// runs the loop, which owns the leader's state from the start: it reads
// the statuses and history first, then starts the mirrors. It runs once.
func (s *ReplicationManager) Run(ctx context.Context) error {
	if !s.ran.CompareAndSwap(false, true) {
		return errRanTwice
	}
	s.started = s.now()
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	// the batchers outlive the loop, which waits for their answers: they
	// stop once it is done
	t := &term{ctx: runCtx, fail: fail, writes: make(chan *registry.BatchedWrite, s.opts.Workers)}
	batchCtx, stopBatches := context.WithCancel(context.WithoutCancel(runCtx))
	var batches sync.WaitGroup
	for range registry.Batchers {
		batches.Go(func() { s.store.RunBatches(batchCtx, s.opts.Guard, t.writes, s.opts.EtcdTimeout) })
	}
	s.viewAsk.ctx, s.reportsAsk.ctx, s.caughtUpAsk.ctx = runCtx, runCtx, runCtx
	var mirrors sync.WaitGroup
	mirrors.Go(func() { s.runEvents(runCtx) })
	mirrors.Go(func() {
		// the statuses and history go to the loop before any change: the
		// mirrors start once they are in the mailbox
		read, err := s.readRegistry(runCtx)
		if err != nil {
			fail(err)
			return
		}
		s.send(func() { s.loadRegistry(read) })
		for prefix, target := range s.targets() {
			mirrors.Go(func() {
				watch := func() error { return s.store.Mirror(runCtx, prefix, target, s.logger.Warn) }
				switch prefix {
				case s.store.ControllersPrefix():
					watch = func() error { return s.WatchControllers(runCtx) }
				case s.store.NodeConfigPrefix():
					watch = func() error { return s.watchConfigs(runCtx, prefix, target) }
				}
				if err := watch(); err != nil {
					fail(err)
				}
			})
		}
	})
	s.term = t
	s.loop(s.mailbox)
	close(s.mailbox.done)
	t.async.Wait()
	mirrors.Wait()
	stopBatches()
	batches.Wait()
	return registry.UnlessStopped(ctx, context.Cause(runCtx))
}

// loop is the leader's loop: it applies what the mirrors and the writes'
// answers send, runs the calls from outside, and decides the next
// controller of the queue when nothing waits and fewer than Workers
// writes are in flight. Once the term's context ends it decides nothing
// more, and returns when every write in flight is answered.
func (s *ReplicationManager) loop(mb *mailbox) {
	ctx := s.term.ctx
	ticks, stopTicks := s.opts.Clock.NewTicker(s.opts.SyncPeriod)
	defer stopTicks()
	for {
		stopping := ctx.Err() != nil
		if stopping && len(s.inflight) == 0 {
			return
		}
		select { // what came in goes before the next decision
		case event := <-mb.events:
			s.take(event)
			continue
		case call := <-mb.calls:
			call()
			continue
		default:
		}
		if !stopping && len(s.inflight) < s.opts.Workers {
			if id, ok := s.queue.take(); ok {
				s.syncReplicationController(ctx, id) // finish handles what the write answers
				continue
			}
		}
		done := ctx.Done()
		if stopping {
			done = nil
		} else {
			s.answerWaiters() // nothing is left to do now
		}
		select {
		case event := <-mb.events:
			s.take(event)
		case call := <-mb.calls:
			call()
		case <-s.queue.wake:
		case <-ticks:
			s.synchronize()
		case <-done:
		}
	}
}

// WatchControllers follows the specs under /registry/controllers into the
// leader's mirror until ctx ends (it then returns nil): one list, then a
// watch, again after each break. Run runs it, with the other mirrors. A spec that changes queues its
// controller. It returns an error only when etcd refuses this manager.
func (s *ReplicationManager) WatchControllers(ctx context.Context) error {
	prefix := s.store.ControllersPrefix()
	return s.store.Mirror(ctx, prefix, s.targets()[prefix], s.logger.Warn)
}

// watchConfigs mirrors the node configs. A role that may not read them
// (one made before they existed) is warned of once, and the term goes on
// with every node active and its --node-labels alone.
func (s *ReplicationManager) watchConfigs(ctx context.Context, prefix string, target registry.MirrorTarget) error {
	err := s.store.Mirror(ctx, prefix, target, s.logger.Warn)
	if !errors.Is(err, rpctypes.ErrPermissionDenied) {
		return err
	}
	s.logger.Warn("the etcd role may not read the node configs: every node is active, with its --node-labels only; grant read on the prefix (docs/SECURITY.md)", "prefix", prefix, "err", err)
	s.seen[prefix].Store(math.MaxInt64) // nothing of it is ever to wait for
	s.send(func() {
		s.setListed(prefix)
		s.viewAt(prefix, math.MaxInt64)
	})
	return nil
}

// Synchronize queues every controller for a decision in the periodic
// lane, behind every change: the safety net Run runs each SyncPeriod. A
// controller whose last decision was calm, with nothing taken in or woken
// since, would be decided unchanged: it is not queued (calm.go). It
// waits for Run to start the loop, and does nothing once it has ended.
func (s *ReplicationManager) Synchronize() { s.onLoop(s.synchronize) }

func (s *ReplicationManager) synchronize() {
	if len(s.gone) > 0 {
		s.world++ // the gone nodes' records may expire: no decision is calm across it
	}
	var ids []string
	for id := range s.specs {
		if !s.unchanged(id, s.inputsOf(id)) {
			ids = append(ids, id)
		}
	}
	s.queue.later(ids...)
	s.expireGoneNodes()
}

// registryRead is what a new leader reads before anything else: the
// statuses, the newest recorded template of every controller and the
// records of gone nodes.
type registryRead struct {
	statuses map[string]*api.ReplicationControllerStatus
	newest   map[string]api.Revision
	gone     []api.GoneNode
	// goneOff: the etcd role may not read the gone nodes.
	goneOff bool
}

// readRegistry reads the statuses and the newest recorded template of
// every controller, so that a new leader carries on where the last one
// stopped: the creation times and the conditions' transition times stay,
// and only templates that are new are recorded (loadRegistry).
func (s *ReplicationManager) readRegistry(ctx context.Context) (registryRead, error) {
	var read registryRead
	err := registry.RetryEtcd(ctx, s.logger, "reading the statuses and history from etcd failed; retrying", func() error {
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
		gone, err := s.store.ListGoneNodes(readCtx)
		goneOff := errors.Is(err, rpctypes.ErrPermissionDenied)
		if goneOff {
			s.logger.Warn("the etcd role may not read the gone nodes; they are not recorded (docs/SECURITY.md lists the key)", "err", err)
		} else if err != nil {
			return err
		}
		read = registryRead{statuses: statuses, newest: newest, gone: gone, goneOff: goneOff}
		return nil
	})
	return read, err
}

// loadRegistry takes what readRegistry read into the records, on the
// loop.
func (s *ReplicationManager) loadRegistry(read registryRead) {
	s.goneOff = read.goneOff
	s.loadGoneNodes(read.gone)
	for id, st := range read.statuses {
		rec := s.record(id)
		rec.status = st
		if st.Rollout != nil {
			rec.rollout = *st.Rollout
		}
	}
	for id, r := range read.newest {
		rec := s.record(id)
		rec.recorded, rec.recordedRev, rec.recordedNumber = r.TemplateHash, r.Revision, r.Number
	}
}

// record returns id's record, making it.
func (s *ReplicationManager) record(id string) *leaderRecord {
	r := s.records[id]
	if r == nil {
		r = &leaderRecord{}
		s.records[id] = r
	}
	return r
}

// ready reports whether every prefix has been listed once: before that,
// a decision could take a controller whose spec is not in yet for gone.
func (s *ReplicationManager) ready() bool { return len(s.listed) == mirroredPrefixes }
