package registry

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
	store   *Store
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

func newEventRecorder(store *Store, now func() time.Time, timeout time.Duration, dropped prometheus.Counter, logger *slog.Logger) *eventRecorder {
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

// run writes queued events until ctx ends.
func (r *eventRecorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			r.flush(context.WithoutCancel(ctx))
			return
		case ev := <-r.queue:
			err := r.write(ctx, &ev)
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
				r.dropped.Inc()
			}
		}
	}
}

// flush writes what is queued when the manager stops, until the queue is
// empty or a write fails.
func (r *eventRecorder) flush(ctx context.Context) {
	for {
		select {
		case ev := <-r.queue:
			if err := r.write(ctx, &ev); err != nil {
				r.dropped.Add(float64(1 + len(r.queue)))
				return
			}
		default:
			return
		}
	}
}

func (r *eventRecorder) write(ctx context.Context, ev *api.Event) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	r.seq++
	if r.lease == 0 || r.now().Sub(r.leaseAt) >= eventLeaseReuse {
		lease, err := r.store.GrantLease(ctx, eventTTL)
		if err != nil {
			return fmt.Errorf("record event: %w", err)
		}
		r.lease, r.leaseAt = lease, r.now()
	}
	name := fmt.Sprintf("%020d-%06d", ev.Time.UnixNano(), r.seq%1_000_000)
	if err := r.store.PutEvent(ctx, name, ev, r.lease); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}
