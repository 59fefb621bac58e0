package agent

// This file records per-controller events in etcd, off the sync's critical
// path: record queues an event and returns at once, and one goroutine
// writes them, each call with a deadline. Events are for people; a sync
// never waits for one. An event that cannot be queued (the queue is full)
// or written (etcd is away) is dropped and counted in
// replication_manager_events_dropped_total.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// Events live about an hour: each lease lasts eventTTL and is used for new
// events for eventLeaseReuse, so an event lives between 50 and 60 minutes
// and etcd removes it without any sweeping on our side.
const (
	eventTTL        = time.Hour
	eventLeaseReuse = 10 * time.Minute
	// eventQueue is how many events may wait to be written.
	eventQueue = 1024
)

// eventRecorder writes events to etcd under a lease.
type eventRecorder struct {
	store   *registry.Store
	now     func() time.Time
	timeout time.Duration
	dropped prometheus.Counter
	logger  *slog.Logger
	queue   chan api.Event

	// owned by run
	lease   clientv3.LeaseID
	leaseAt time.Time
	seq     uint64
	failing bool
}

func newEventRecorder(store *registry.Store, now func() time.Time, timeout time.Duration, dropped prometheus.Counter, logger *slog.Logger) *eventRecorder {
	return &eventRecorder{store: store, now: now, timeout: timeout, dropped: dropped, logger: logger, queue: make(chan api.Event, eventQueue)}
}

// record queues one event; it never blocks.
func (r *eventRecorder) record(controller, typ, reason, message string) {
	ev := api.Event{Controller: controller, Type: typ, Reason: reason, Message: message, Time: r.now().UTC()}
	select {
	case r.queue <- ev:
	default:
		r.dropped.Inc()
	}
}

// eventBatch is the most events one etcd transaction writes (etcd's
// default limit of operations per transaction is 128).
const eventBatch = 64

// run writes queued events until ctx ends, as many at a time as are
// waiting (up to eventBatch), so that a burst of syncs costs a few etcd
// round trips, not one per event.
func (r *eventRecorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			r.last(ctx, nil)
			return
		case ev := <-r.queue:
			batch := r.take(ev)
			err := r.write(ctx, batch)
			if err != nil && ctx.Err() != nil {
				r.last(ctx, batch) // the stop cut this write off: no outage
				return
			}
			switch {
			case err != nil && !r.failing:
				// once per outage, not once per event
				r.logger.Warn("recording events failed; dropping them until etcd takes them again", "err", err)
				r.failing = true
			case err == nil && r.failing:
				r.logger.Info("recording events again")
				r.failing = false
			}
			if err != nil {
				r.dropped.Add(float64(len(batch)))
			}
		}
	}
}

// flushTimeout bounds the writes of the events left at a stop.
const flushTimeout = time.Second

// last writes, once ctx has ended, the batch a stop cut off and what is
// queued: within a second, not more, so that a stop is bounded even when
// etcd is away.
func (r *eventRecorder) last(ctx context.Context, cut []api.Event) {
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	if len(cut) > 0 {
		if err := r.write(flushCtx, cut); err != nil {
			r.dropped.Add(float64(len(cut) + len(r.queue)))
			return
		}
	}
	r.flush(flushCtx)
}

// take returns first and the events queued after it, up to eventBatch.
func (r *eventRecorder) take(first api.Event) []api.Event {
	batch := []api.Event{first}
	for len(batch) < eventBatch {
		select {
		case ev := <-r.queue:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// flush writes what is queued when the manager stops, until the queue is
// empty or a write fails.
func (r *eventRecorder) flush(ctx context.Context) {
	for {
		select {
		case ev := <-r.queue:
			batch := r.take(ev)
			if err := r.write(ctx, batch); err != nil {
				r.dropped.Add(float64(len(batch) + len(r.queue)))
				return
			}
		default:
			return
		}
	}
}

func (r *eventRecorder) write(ctx context.Context, batch []api.Event) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if r.lease == 0 || r.now().Sub(r.leaseAt) >= eventLeaseReuse {
		lease, err := r.store.GrantLease(ctx, eventTTL)
		if err != nil {
			return fmt.Errorf("record event: %w", err)
		}
		r.lease, r.leaseAt = lease, r.now()
	}
	named := make([]registry.NamedEvent, len(batch))
	for i := range batch {
		r.seq++
		named[i] = registry.NamedEvent{Name: fmt.Sprintf("%020d-%06d", batch[i].Time.UnixNano(), r.seq%1_000_000), Event: &batch[i]}
	}
	if err := r.store.PutEvents(ctx, named, r.lease); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}
