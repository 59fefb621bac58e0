package registry

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// Events live about an hour: each lease lasts eventTTL and is used for new
// events for eventLeaseReuse, so an event lives between 50 and 60 minutes
// and etcd removes it without any sweeping on our side.
const (
	eventTTL        = time.Hour
	eventLeaseReuse = 10 * time.Minute
)

// eventRecorder writes per-controller events to etcd under a lease.
type eventRecorder struct {
	store *Store
	now   func() time.Time

	mu      sync.Mutex
	lease   clientv3.LeaseID
	leaseAt time.Time
	seq     uint64
}

// record stores one event. Events are for people: the caller reports a
// failure to write one along with the sync's other errors.
func (r *eventRecorder) record(ctx context.Context, controller, typ, reason, message string) error {
	lease, seq, err := r.currentLease(ctx)
	if err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	now := r.now().UTC()
	ev := &api.Event{Controller: controller, Type: typ, Reason: reason, Message: message, Time: now}
	name := fmt.Sprintf("%020d-%06d", now.UnixNano(), seq%1_000_000)
	if err := r.store.PutEvent(ctx, name, ev, lease); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}

func (r *eventRecorder) currentLease(ctx context.Context) (clientv3.LeaseID, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if r.lease != 0 && r.now().Sub(r.leaseAt) < eventLeaseReuse {
		return r.lease, r.seq, nil
	}
	lease, err := r.store.GrantLease(ctx, eventTTL)
	if err != nil {
		return 0, 0, err
	}
	r.lease, r.leaseAt = lease, r.now()
	return lease, r.seq, nil
}
