package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/replication-manager/replication-manager/api"
)

// Options tune a ReplicationManager. Zero values take the defaults.
type Options struct {
	// SyncPeriod is how often every controller is synced even without an
	// event: the safety net, not the main path.
	SyncPeriod time.Duration
	// Workers is how many controllers sync in parallel.
	Workers int
	// BurstReplicas caps the creates (and deletes) of one sync.
	BurstReplicas int
	// MaxReplicas is the highest replica count a spec may ask for.
	MaxReplicas int
	// DrainTimeout is how long syncs in progress may go on after Run's
	// context ends, so that a create is not cut between create and start.
	DrainTimeout time.Duration
	// Policy says which security-sensitive template fields are allowed.
	Policy api.SecurityPolicy
	// Registerer receives the manager's metrics; nil registers nowhere.
	Registerer prometheus.Registerer
}

// Defaults for Options.
const (
	DefaultSyncPeriod    = 30 * time.Second
	DefaultWorkers       = 5
	DefaultBurstReplicas = 50
	DefaultDrainTimeout  = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
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
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	return o
}

// ReplicationManager is responsible for synchronizing ReplicationController
// objects stored in etcd with the actual running tasks (the 2014 name and
// role). Specs come from an etcd list and watch into a cache; every change
// queues the controller's id; workers take ids off the queue and sync them,
// one controller at a time under its lock, retrying failures with
// per-controller exponential backoff.
type ReplicationManager struct {
	store       *Store
	taskControl TaskControlInterface
	logger      *slog.Logger
	opts        Options
	metrics     *metrics

	specs *specCache
	tasks *taskCache
	queue workqueue.TypedRateLimitingInterface[string]
	locks keyLocks

	// createBackoff spaces out creates after a failed one (a missing
	// image, a refusing daemon); crashes spaces them out while containers
	// crash soon after they start.
	createBackoff *stepBackoff
	crashes       *crashTracker
	// proven holds the template hashes whose creates succeeded last time.
	proven    provenTemplates
	validated validations
	events    *eventRecorder

	statusMu sync.Mutex
	// statuses holds the last status written (or read at start) per
	// controller, so that an unchanged status is not written again.
	statuses map[string]*api.ReplicationControllerStatus

	// now is the clock; tests replace it.
	now func() time.Time
}

// NewReplicationManager builds a manager; Run starts it.
func NewReplicationManager(store *Store, taskControl TaskControlInterface, logger *slog.Logger, opts Options) *ReplicationManager {
	opts = opts.withDefaults()
	m := newMetrics(opts.Registerer)
	limiter := workqueue.NewTypedMaxOfRateLimiter(
		// per controller: 5ms doubling to about five minutes
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 5*time.Minute),
		// overall: 20 retries a second, bursts of 200
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(20), 200)},
	)
	rm := &ReplicationManager{
		store:         store,
		taskControl:   m.instrument(taskControl),
		logger:        logger,
		opts:          opts,
		metrics:       m,
		specs:         newSpecCache(),
		tasks:         newTaskCache(),
		createBackoff: newStepBackoff(createBackoffStart, createBackoffMax),
		crashes:       newCrashTracker(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "controllers", MetricsProvider: m.queue}),
		statuses: make(map[string]*api.ReplicationControllerStatus),
		now:      time.Now,
	}
	rm.events = &eventRecorder{store: store, now: func() time.Time { return rm.now() }}
	return rm
}

// A failed create waits 1s before the next, doubling to five minutes, so a
// missing image costs a handful of calls a minute, not thousands.
const (
	createBackoffStart = time.Second
	createBackoffMax   = 5 * time.Minute
)

// Run watches etcd and syncs controllers until ctx ends. Syncs in progress
// then get DrainTimeout to finish; containers are left running. Run returns
// nil after a clean stop.
func (rm *ReplicationManager) Run(ctx context.Context) error {
	// Work in progress runs on its own context, cancelled only after the
	// drain timeout, so that stopping never cuts a create in half.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	if err := rm.loadStatuses(ctx); err != nil {
		return nil // ctx ended before etcd answered
	}

	var wg sync.WaitGroup
	wg.Go(func() { rm.WatchControllers(ctx) })
	wg.Go(func() { rm.watchTasks(ctx) })
	if !rm.waitForList(ctx) {
		rm.queue.ShutDown()
		wg.Wait()
		return nil
	}
	rm.queueOrphans()
	for range rm.opts.Workers {
		wg.Go(func() {
			for rm.processNextWorkItem(workCtx) {
			}
		})
	}
	wg.Go(func() { rm.synchronizeEvery(ctx) })

	<-ctx.Done()
	rm.logger.Info("stopping: finishing syncs in progress", "timeout", rm.opts.DrainTimeout)
	timer := time.AfterFunc(rm.opts.DrainTimeout, cancelWork)
	defer timer.Stop()
	rm.queue.ShutDown() // workers finish the sync in hand, then stop
	wg.Wait()
	return nil
}

// Synced reports whether the first full list of specs is done, so that the
// manager knows every controller; /readyz uses it.
func (rm *ReplicationManager) Synced() bool { return rm.specs.isListed() }

// loadStatuses reads the stored statuses, retrying while etcd is away, so
// that a restarted manager does not rewrite unchanged statuses and finds
// controllers deleted while it was down. It fails only when ctx ends.
func (rm *ReplicationManager) loadStatuses(ctx context.Context) error {
	backoff := retryBackoff()
	for {
		statuses, err := rm.store.ListStatuses(ctx)
		if err == nil {
			rm.statusMu.Lock()
			rm.statuses = statuses
			rm.statusMu.Unlock()
			return nil
		}
		delay := backoff.Step()
		rm.logger.Warn("reading controller statuses failed; retrying", "retryIn", delay, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// waitForList blocks until the first list is applied; false if ctx ended.
func (rm *ReplicationManager) waitForList(ctx context.Context) bool {
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for !rm.specs.isListed() {
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
	}
	return true
}

// queueOrphans queues controllers that have a status but no spec: they
// were deleted while the manager was down, and their containers must go.
// Containers of controllers this registry never managed are not looked at,
// so several managers with their own etcd can share one Docker host.
func (rm *ReplicationManager) queueOrphans() {
	rm.statusMu.Lock()
	defer rm.statusMu.Unlock()
	for id := range rm.statuses {
		if _, exists, _ := rm.specs.get(id); !exists {
			rm.queue.Add(id)
		}
	}
}

// synchronizeEvery calls Synchronize every sync period until ctx ends.
func (rm *ReplicationManager) synchronizeEvery(ctx context.Context) {
	ticker := time.NewTicker(rm.opts.SyncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := rm.Synchronize(ctx); err != nil {
				rm.logger.Warn("resync could not list containers; syncing from the cache", "err", err)
			}
		}
	}
}

// resyncBacklog is how many controllers a resync keeps queued at most: it
// feeds the queue as the workers drain it, so that a controller queued by
// an event waits behind this many, not behind every controller there is.
const resyncBacklog = 64

// Synchronize lists the containers once, to catch events Docker dropped,
// and queues every known controller (the 2014 periodic sync), a batch at a
// time, returning when the last one is queued or ctx ends. The queue
// de-duplicates, so a controller already waiting is not queued twice. Every
// controller is queued even when the list fails.
func (rm *ReplicationManager) Synchronize(ctx context.Context) error {
	err := rm.relistTasks(ctx)
	ids := rm.specs.ids()
	for _, id := range ids {
		for rm.queue.Len() >= resyncBacklog {
			if ctx.Err() != nil || rm.queue.ShuttingDown() {
				return err
			}
			time.Sleep(time.Millisecond)
		}
		rm.queue.Add(id)
	}
	rm.logger.Debug("resync queued every controller", "count", len(ids))
	return err
}

// processNextWorkItem syncs one controller off the queue. A failed sync is
// logged here, once, and retried with backoff; a successful one resets the
// controller's backoff. It returns false when the queue is shut down.
func (rm *ReplicationManager) processNextWorkItem(ctx context.Context) bool {
	id, quit := rm.queue.Get()
	if quit {
		return false
	}
	defer rm.queue.Done(id)

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

// syncRecovering runs one sync and turns a panic into an error, so that a
// bug hit by one controller is retried with backoff and logged, and never
// takes the daemon and every other controller down with it.
func (rm *ReplicationManager) syncRecovering(ctx context.Context, id string) error {
	err := recovered(func() error { return rm.syncReplicationController(ctx, id) })
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
