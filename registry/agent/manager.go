package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// Options tune an Agent. Zero values take the defaults.
type Options struct {
	// SyncPeriod is how often every controller is synced even without an
	// event: the safety net, not the main path.
	SyncPeriod time.Duration
	// RelistPeriod is how often the periodic pass lists the containers
	// again besides syncing from the cache, to catch events Docker
	// dropped; 0 lists them every SyncPeriod. The event stream's
	// reconnects list them too.
	RelistPeriod time.Duration
	// Workers is how many controllers sync in parallel.
	Workers int
	// BurstReplicas caps the creates (and deletes) of one sync.
	BurstReplicas int
	// MaxReplicas is the highest replica count a spec may ask for.
	MaxReplicas int
	// EtcdTimeout bounds every etcd call of a sync (a status, an event),
	// so that etcd being away never holds a controller.
	EtcdTimeout time.Duration
	// DrainTimeout is how long syncs in progress may go on after Run's
	// context ends, so that a create is not cut between create and start.
	DrainTimeout time.Duration
	// RevisionHistoryLimit is how many recorded templates are kept per
	// controller.
	RevisionHistoryLimit int
	// Policy says which security-sensitive template fields are allowed.
	Policy api.SecurityPolicy
	// MaxStopGrace is the cap the node's task control puts on every
	// container's grace period (--stop-when-isolated); zero is none. A
	// container that asks for more is told of in an event (stopgrace.go).
	MaxStopGrace time.Duration
	// Node is the node this manager acts for: it runs the slots the
	// leader assigns to it and reports on them. Required.
	Node NodeOptions
	// Registerer receives the manager's metrics; nil registers nowhere.
	Registerer prometheus.Registerer
	// Now is the manager's clock; nil is the wall clock. Tests give a
	// clock they move.
	Now func() time.Time
}

// Defaults for Options. A node's sync mostly waits, on etcd (its claim,
// its report) and on Docker: DefaultWorkers keeps that many in flight (at
// 10,000 controllers × 10, 5 workers took 12.2 s to bring every status
// up, 16 took 9.8 s; docs/BENCHMARKS.md).
const (
	DefaultWorkers       = 16
	DefaultBurstReplicas = 50
	DefaultDrainTimeout  = 10 * time.Second
	// DefaultRelistPeriod is --relist-period's default: the periodic pass
	// works from the cache, and lists the containers again this often.
	DefaultRelistPeriod = 5 * time.Minute
)

func (o Options) withDefaults() Options {
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = registry.DefaultSyncPeriod
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.BurstReplicas <= 0 {
		o.BurstReplicas = DefaultBurstReplicas
	}
	if o.MaxReplicas <= 0 {
		o.MaxReplicas = api.DefaultMaxReplicas
	}
	if o.RevisionHistoryLimit <= 0 {
		o.RevisionHistoryLimit = registry.DefaultRevisionHistoryLimit
	}
	if o.EtcdTimeout <= 0 {
		o.EtcdTimeout = registry.DefaultEtcdTimeout
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Agent keeps the containers of this node's assigned slots running on
// its engine. Specs and assignments come from etcd lists and watches into
// caches; every change queues the controller's id; workers take ids off
// the queue and sync the controller's slots on this node, one controller
// at a time, retrying failures with per-controller exponential backoff.
type Agent struct {
	store       *registry.Store
	taskControl TaskControlInterface
	logger      *slog.Logger
	opts        Options
	metrics     *metrics

	specs *specCache
	tasks *taskCache
	// queue never hands one key to two workers at once (client-go's
	// workqueue keeps a key out of Get while it is processing), so a
	// controller is synced by one goroutine at a time without a lock of
	// its own, and its record in states is that goroutine's.
	queue  wakingQueue
	states states
	// wakes counts the wake-ups of each controller but the periodic
	// pass's (quiet.go).
	wakes  *wakes
	events *eventRecorder
	// pulls pulls images beside the syncs.
	pulls *puller
	// drained gets a signal (coalesced, never blocking) each time a worker
	// finishes a sync, so that the second lane feeds the queue as it
	// drains.
	drained    chan struct{}
	background *feeder
	// busy counts the workers syncing a controller now.
	busy atomic.Int32
	// relistMu runs one container list at a time, and guards listedAt,
	// when the last one answered.
	relistMu sync.Mutex
	listedAt time.Time
	// slots are the slots assigned to this node.
	slots *nodeSlots
	// digests are the repo digests of the images the containers run
	// (imagedigests.go).
	digests *repoDigests
	// graceCapped holds the controller and template hash pairs whose
	// capped grace period was told of (stopgrace.go).
	graceCapped sync.Map

	// registryID is this registry's id (docs/CONTRACT.md, Containers), read or
	// made once by Run before anything syncs; sharedID is the same, for
	// readers outside Run (RegistryID).
	registryID string
	sharedID   atomic.Pointer[string]

	// now is the clock (Options.Now).
	now func() time.Time
}

// New builds a manager; Run starts it.
func New(store *registry.Store, taskControl TaskControlInterface, logger *slog.Logger, opts Options) *Agent {
	opts = opts.withDefaults()
	m := newMetrics(opts.Registerer)
	limiter := workqueue.NewTypedMaxOfRateLimiter(
		// per controller: 5ms doubling to about five minutes
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 5*time.Minute),
		// overall: 20 retries a second, bursts of 200
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(20), 200)},
	)
	rm := &Agent{
		store:       store,
		taskControl: m.instrument(taskControl),
		logger:      logger,
		opts:        opts,
		metrics:     m,
		specs:       newSpecCache(),
		tasks:       newTaskCache(),
		digests:     newRepoDigests(),
		wakes:       &wakes{},
		drained:     make(chan struct{}, 1),
		background:  newFeeder(),
		now:         opts.Now,
	}
	rm.queue = wakingQueue{wakes: rm.wakes, TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "controllers", MetricsProvider: m.queue})}
	rm.slots = newNodeSlots(store, opts.Node.Name, rm.queue.Add, func(id string) { rm.later(id) }, logger.Warn)
	rm.events = newEventRecorder(store, func() time.Time { return rm.now() }, opts.EtcdTimeout, m.eventsDropped, logger)
	rm.pulls = newPuller(rm.taskControl.PullImage, func() time.Time { return rm.now() }, rm.queue.Add, rm.record)
	return rm
}

// Run watches etcd and syncs controllers until ctx ends. Syncs in progress
// then get DrainTimeout to finish; containers are left running. Run returns
// nil after a stop through ctx, and the error that ended it otherwise: etcd
// refusing this manager's credentials (permission denied, authentication
// failed), which no retry can fix. While etcd or Docker are merely away,
// it keeps trying.
func (rm *Agent) Run(ctx context.Context) error {
	// Work in progress runs on its own context, cancelled only after the
	// drain timeout, so that stopping never cuts a create in half.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	if err := rm.prepare(runCtx); err != nil {
		return registry.UnlessStopped(ctx, err)
	}

	var watchers, workers sync.WaitGroup
	eventsCtx, stopEvents := context.WithCancel(workCtx)
	defer stopEvents()
	watchers.Go(func() { rm.events.run(eventsCtx) })
	watchers.Go(func() {
		if err := rm.watchSpecs(runCtx); err != nil {
			fail(err)
		}
	})
	watchers.Go(func() { rm.watchTasks(runCtx) })
	watchers.Go(func() { rm.feed(runCtx) })
	watchers.Go(func() {
		if err := rm.store.Mirror(runCtx, rm.store.AssignmentsPrefix(), rm.slots, rm.logger.Warn); err != nil {
			fail(err)
		}
	})
	select {
	case <-runCtx.Done():
	case <-rm.listed(runCtx):
		rm.queueOrphans()
		for range rm.opts.Workers {
			workers.Go(func() {
				for rm.processNextWorkItem(workCtx) {
				}
			})
		}
		watchers.Go(func() { rm.synchronizeEvery(runCtx) })
		<-runCtx.Done()
	}

	rm.logger.Info("stopping: finishing syncs in progress", "timeout", rm.opts.DrainTimeout)
	timer := time.AfterFunc(rm.opts.DrainTimeout, cancelWork)
	defer timer.Stop()
	rm.queue.ShutDown() // workers finish the sync in hand, then stop
	workers.Wait()
	rm.pulls.stop() // a pull under way is not waited for
	stopEvents()    // events the last syncs queued are flushed first
	watchers.Wait()
	return registry.UnlessStopped(ctx, context.Cause(runCtx))
}

// listed is closed once the specs and the assignments are listed, or ctx
// ends.
func (rm *Agent) listed(ctx context.Context) <-chan struct{} {
	both := make(chan struct{})
	go func() {
		defer close(both)
		for _, ch := range []<-chan struct{}{rm.specs.listedCh, rm.slots.listed} {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return both
}

// prepare reads this registry's id, making it if this is the first
// manager, and this node's reports, retrying while etcd is away. It fails
// when ctx ends or etcd refuses the manager for good.
func (rm *Agent) prepare(ctx context.Context) error {
	return registry.RetryEtcd(ctx, rm.logger, "reading the registry from etcd failed; retrying", func() error {
		return rm.readRegistry(ctx)
	})
}

func (rm *Agent) readRegistry(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, rm.opts.EtcdTimeout)
	defer cancel()
	id, err := rm.store.RegistryID(ctx)
	if err != nil {
		return err
	}
	rm.sharedID.Store(&id)
	reports, err := rm.readReports(ctx)
	if err != nil {
		return err
	}
	rm.registryID = id
	rm.states.loadReports(reports)
	rm.logger.Info("registry read", "registry", id, "node", rm.opts.Node.Name, "reports", len(reports))
	return nil
}

// RegistryID returns this registry's id once Run has read it, else "".
func (rm *Agent) RegistryID() string {
	if id := rm.sharedID.Load(); id != nil {
		return *id
	}
	return ""
}

// Synced reports whether the first full list of specs is done, so that the
// manager knows every controller; /readyz uses it.
func (rm *Agent) Synced() bool { return rm.specs.isListed() }

// queueOrphans queues controllers that have a record (a stored status) but
// no spec: they were deleted while the manager was down, and their
// containers must go. Containers of controllers this registry never
// managed are not looked at.
func (rm *Agent) queueOrphans() {
	for _, id := range rm.states.ids() {
		if _, exists, _ := rm.specs.get(id); !exists {
			rm.queue.Add(id)
		}
	}
}

// synchronizeEvery calls Resync every sync period until ctx ends.
func (rm *Agent) synchronizeEvery(ctx context.Context) {
	ticker := time.NewTicker(rm.opts.SyncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := rm.Resync(ctx); err != nil {
				rm.logger.Warn("resync could not list containers; syncing from the cache", "err", err)
			}
		}
	}
}

// Resync queues every known controller (the 2014 periodic sync) in the
// second lane (feeder.go), so that work an event brings does not wait
// behind it, and first lists the containers again, to catch events Docker
// dropped, when RelistPeriod has passed since the last list. A controller
// whose last sync was calm and whose inputs have not changed since is
// found unchanged here, as its sync would find it, without queueing it
// (quiet.go). It returns once the last one is in the queue, or when ctx
// ends. Every controller is queued even when the list fails.
func (rm *Agent) Resync(ctx context.Context) error {
	var err error
	if rm.relistDue() {
		err = rm.relistTasks(ctx)
	}
	ids := rm.specs.ids()
	queued := slices.DeleteFunc(ids, func(id string) bool {
		start := time.Now()
		if rm.unchanged(id) {
			rm.metrics.observeSync(start, "unchanged")
			return true
		}
		return false
	})
	rm.background.add(queued...) // the periodic pass: no wake-up (quiet.go)
	select {
	case <-ctx.Done():
	case <-rm.background.drainedCh():
		rm.logger.Debug("resync queued every controller not found unchanged", "count", len(queued))
	}
	return err
}

// relistDue reports whether the periodic pass lists the containers again.
func (rm *Agent) relistDue() bool {
	rm.relistMu.Lock()
	defer rm.relistMu.Unlock()
	return rm.opts.RelistPeriod <= 0 || rm.now().Sub(rm.listedAt) >= rm.opts.RelistPeriod
}

// processNextWorkItem syncs one controller off the queue. A failed sync is
// logged here, once, and retried with backoff; a successful one resets the
// controller's backoff. It returns false when the queue is shut down.
func (rm *Agent) processNextWorkItem(ctx context.Context) bool {
	id, quit := rm.queue.Get()
	if quit {
		return false
	}
	rm.busy.Add(1)
	defer func() {
		rm.busy.Add(-1)
		rm.finished(id)
	}()

	err := rm.syncRecovering(ctx, id)
	if err == nil {
		rm.queue.Forget(id)
		return true
	}
	retries := rm.queue.NumRequeues(id)
	rm.logger.Error("sync failed; retrying with backoff", "controller", id, "retries", retries, "err", err)
	rm.queue.AddRateLimited(id)
	return true
}

// finished hands id back to the queue after its sync and tells the feeder
// that there is room.
func (rm *Agent) finished(id string) {
	rm.queue.Done(id)
	select {
	case rm.drained <- struct{}{}:
	default:
	}
}

// syncRecovering runs one sync and turns a panic into an error, so that a
// bug hit by one controller is retried with backoff and logged, and never
// takes the daemon and every other controller down with it.
func (rm *Agent) syncRecovering(ctx context.Context, id string) error {
	err := recovered(func() error { return rm.syncSlots(ctx, id) })
	if errors.Is(err, errPanic) {
		rm.metrics.syncPanics.Inc()
	}
	return err
}

// errNotListed is returned by a sync that ran before the first list: it
// cannot tell a deleted controller from one not yet seen.
var errNotListed = errors.New("controllers not listed yet")

func wrapSync(id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sync %s: %w", id, err)
}
