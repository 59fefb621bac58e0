package registry

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// TestBatchesKeepUnderEtcdsRequestLimit sends the batcher writes whose
// sum is three times etcd's request limit: they go in several
// transactions, each under it, and every one lands, through a network
// client and through the in-process one of the daemon's own etcd.
func TestBatchesKeepUnderEtcdsRequestLimit(t *testing.T) {
	clients := map[string]func(testing.TB) *clientv3.Client{"network": testClient, "in-process": etcdServer.RolesClient}
	for name, newClient := range clients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			store := NewStore(client, "/"+t.Name())
			writes := make(chan *BatchedWrite, 200)
			const n = 100
			message := strings.Repeat("x", 48<<10) // 100 × 48 KiB: about 4.7 MiB
			var sent []*BatchedWrite
			answers := make(chan BatchResult, n)
			for i := range n {
				st := &api.ReplicationControllerStatus{Conditions: []api.Condition{{Type: "Big", Status: "True", Message: message}}}
				bw := store.Prepare(LeaderWrite{ID: fmt.Sprintf("c%03d", i), Status: st}, func(r BatchResult) { answers <- r })
				if !bw.Batchable() {
					t.Fatalf("a write of %d bytes is not batchable", bw.bytes)
				}
				sent = append(sent, bw)
				writes <- bw // all queued before the batcher starts: it takes as many as fit
			}
			go store.RunBatches(ctx, nil, writes, 10*time.Second)
			revs := map[int64]int{}
			for range sent {
				r := <-answers
				if r.Err != nil {
					t.Fatalf("a write: %v", r.Err)
				}
				revs[r.Rev]++
			}
			if len(revs) < 4 {
				t.Errorf("%d writes of 4.7 MiB in %d transactions; each must stay under 1.5 MiB", n, len(revs))
			}
			resp, err := client.Get(ctx, store.StatusPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Count != n {
				t.Errorf("%d statuses in etcd, want %d", resp.Count, n)
			}
		})
	}
}

func TestAWriteOfManyChangesGoesAlone(t *testing.T) {
	store := NewStore(nil, "/x")
	w := LeaderWrite{ID: "web"}
	for slot := 1; slot <= batchChanges+1; slot++ {
		w.Changes = append(w.Changes, AssignChange{ID: "web", Slot: slot, Next: &api.Assignment{Node: "a"}})
	}
	if store.Prepare(w, nil).Batchable() {
		t.Errorf("a write of %d changes is batchable; its nested transaction would pass etcd's limit beside a full batch", len(w.Changes))
	}
	w.Changes = w.Changes[:batchChanges]
	if !store.Prepare(w, nil).Batchable() {
		t.Errorf("a write of %d changes is not batchable", len(w.Changes))
	}
}
