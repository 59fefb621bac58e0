package bench

// This file times the first convergence's statuses: a watch on the status
// prefix notes when every controller's status, which the leader writes
// from the node's reports, says all its replicas are ready.

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// readyTally is the time at which every controller of a convergence was
// first seen ready; done is closed then.
type readyTally struct {
	done chan struct{}
	at   time.Time
}

// watchAllReady watches the statuses of the controllers scaleID(0..n-1)
// until each says replicas ready at once, or ctx ends.
func (w *scaleWorker) watchAllReady(ctx context.Context, n, replicas int) (*readyTally, error) {
	prefix := w.store.StatusPrefix()
	watch := w.client.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return nil, fmt.Errorf("watch statuses: %w", resp.Err())
	}
	// a status of all replicas ready holds this; most statuses on the way
	// there do not, and are not decoded
	want := []byte(`"readyReplicas":` + strconv.Itoa(replicas))
	t := &readyTally{done: make(chan struct{})}
	go func() {
		ready := make(map[string]bool, n)
		for resp := range watch {
			at := time.Now()
			for _, ev := range resp.Events {
				id := strings.TrimPrefix(string(ev.Kv.Key), prefix)
				if !strings.HasPrefix(id, scalePrefix) {
					continue // a probe's
				}
				delete(ready, id)
				if ev.Type != clientv3.EventTypePut || !bytes.Contains(ev.Kv.Value, want) {
					continue
				}
				if st, err := api.DecodeStatus(ev.Kv.Value); err == nil && st.Replicas == replicas && st.ReadyReplicas == replicas {
					ready[id] = true
				}
			}
			if len(ready) == n {
				t.at = at
				close(t.done)
				return
			}
		}
	}()
	return t, nil
}

// wait returns when every controller was seen ready.
func (t *readyTally) wait(ctx context.Context, timeout time.Duration) (time.Time, error) {
	select {
	case <-t.done:
		return t.at, nil
	case <-time.After(timeout):
		return time.Time{}, fmt.Errorf("not every status said its replicas were ready within %s", timeout)
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}
