package agent_test

// A benchmark of one host as the daemon builds it (the external harness),
// run by `make bench`: the leader's and the node's sync of a controller that
// has nothing to do, what every resync costs per controller.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/registry/roles"
)

// BenchmarkSyncReplicationController is one sync of a controller whose
// replicas all run, on the node and on the leader: the decision finds
// nothing to do and the status is unchanged, so neither writes to Docker
// or etcd. A resync costs this once per controller. The leader's is its
// running loop's periodic decision, waited for with CaughtUp, which reads
// etcd's revision and waits for the watches' progress: a round trip
// through the loop, not the decision alone (BenchmarkDecide).
func BenchmarkSyncReplicationController(b *testing.B) {
	for _, replicas := range []int{10, 100} {
		b.Run(fmt.Sprintf("steady/replicas=%d", replicas), func(b *testing.B) {
			h := newHarness(b, roles.Options{SyncPeriod: time.Hour, BurstReplicas: replicas})
			ctx := b.Context()
			h.setSpec(newController("web", replicas))
			for range 3 { // the first sync creates, the next see them settled
				if err := h.syncB(ctx, "web"); err != nil {
					b.Fatal(err)
				}
			}
			if got := h.fake.Len(); got != replicas {
				b.Fatalf("%d containers after the first syncs, want %d", got, replicas)
			}
			h.fake.Reset()

			b.Run("node", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := h.rm.SyncSlots(ctx, "web"); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("leader", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := h.lead(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			if c := h.fake.Counts(); c.Create+c.Delete+c.List+c.Inspect+c.Rename != 0 {
				b.Errorf("a steady sync called the task control: %+v", c)
			}
		})
	}
}

// syncB is sync for a benchmark.
func (h *harness) syncB(ctx context.Context, id string) error {
	if err := h.lead(ctx); err != nil {
		return err
	}
	if err := h.follow(ctx, h.store.AssignmentsPrefix(), h.rm.Slots()); err != nil {
		return err
	}
	if err := h.rm.RelistTasks(ctx); err != nil {
		return err
	}
	if err := h.rm.SyncSlots(ctx, id); err != nil {
		return err
	}
	return h.lead(ctx)
}
