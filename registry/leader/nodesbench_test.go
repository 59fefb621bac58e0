package leader

// A benchmark of the scheduler over simulated nodes, as the daemon's
// leader runs it (NewReplicationManager(...).Run), on a real etcd started
// inside the benchmark (make test does not pay for it). The nodes are
// registrations only (api.Node under a lease each, as a node's manager
// writes it), with no manager behind them. It runs only with -bench:
//
//	go test ./registry/leader -run '^$' -bench SchedulerNodes -benchtime 1x
//
// The scale is RM_BENCH_CONTROLLERS × RM_BENCH_REPLICAS over RM_BENCH_NODES
// (default 10,000 × 10 over 100, the targets' scale).

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/benchenv"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/registry"
)

const (
	// nodesTimeout bounds every wait of the benchmark.
	nodesTimeout = 5 * time.Minute
	// benchGrace is the scheduler's NodeGrace: how long a dead node
	// keeps its slots, in the reassignment figure.
	benchGrace = 100 * time.Millisecond
)

// assignmentTally follows the assignments through one watch: which node
// every slot is on, and when a goal was reached (so many keys, or no slot
// left on a dead node), by the time the watch response that reached it
// arrived.
type assignmentTally struct {
	mu     sync.Mutex
	nodeOf map[string]string
	writes int
	goal   func() bool
	at     chan time.Time
}

func watchAssignments(tb testing.TB, ctx context.Context, client *clientv3.Client, store *registry.Store) *assignmentTally {
	tb.Helper()
	t := &assignmentTally{nodeOf: make(map[string]string)}
	watch := client.Watch(ctx, store.AssignmentsPrefix(), clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		tb.Fatalf("watch assignments: %v", resp.Err())
	}
	go func() {
		for resp := range watch {
			at := time.Now()
			t.mu.Lock()
			for _, ev := range resp.Events {
				t.writes++
				key := string(ev.Kv.Key)
				if ev.Type == clientv3.EventTypeDelete {
					delete(t.nodeOf, key)
					continue
				}
				if a, err := api.DecodeAssignment(ev.Kv.Value); err == nil {
					t.nodeOf[key] = a.Node
				}
			}
			if t.goal != nil && t.goal() {
				t.goal = nil
				t.at <- at
			}
			t.mu.Unlock()
		}
	}()
	return t
}

// until returns when goal, checked under the tally's lock after every
// watch response, holds.
func (t *assignmentTally) until(tb testing.TB, what string, goal func() bool) time.Time {
	tb.Helper()
	at := make(chan time.Time, 1)
	t.mu.Lock()
	if goal() {
		t.mu.Unlock()
		return time.Now()
	}
	t.goal, t.at = goal, at
	t.mu.Unlock()
	select {
	case a := <-at:
		return a
	case <-time.After(nodesTimeout):
		tb.Fatalf("%s: not within %s", what, nodesTimeout)
	}
	return time.Time{}
}

// slotsOn counts the slots on node; the lock must be held.
func (t *assignmentTally) slotsOn(node string) int {
	n := 0
	for _, on := range t.nodeOf {
		if on == node {
			n++
		}
	}
	return n
}

func (t *assignmentTally) writeCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.writes
}

// BenchmarkSchedulerNodes is the scheduler over simulated nodes: its first
// assignment of every slot (target ≤ 5 s at 10,000 × 10 over 100 nodes),
// the reassignment of a dead node's slots, the grace included (target
// ≤ 1 s), and the assignment writes of a steady sync period (target 0).
func BenchmarkSchedulerNodes(b *testing.B) {
	controllers, replicas := benchenv.Int(b, "RM_BENCH_CONTROLLERS", 10000), benchenv.Int(b, "RM_BENCH_REPLICAS", 10)
	nodes := benchenv.Int(b, "RM_BENCH_NODES", 100)
	server := etcdtest.Start(b)
	client := server.Client(b)
	ctx := b.Context()
	var run int
	// scheduler runs a scheduler on store until the benchmark ends or
	// its stop is called
	scheduler := func(store *registry.Store, period time.Duration) (stop func()) {
		s := NewReplicationManager(store, slog.New(slog.DiscardHandler), Options{NodeGrace: benchGrace, SyncPeriod: period})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Run(runCtx) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				b.Error(err)
			}
		}
	}
	// setup writes the specs and registers the nodes on a new prefix
	setup := func() (*registry.Store, map[string]clientv3.LeaseID) {
		run++
		store := registry.NewStore(client, fmt.Sprintf("/bench/nodes-%d", run))
		for first := 0; first < controllers; first += 100 {
			var ops []clientv3.Op
			for i := first; i < min(first+100, controllers); i++ {
				rc := demospec.Controller(fmt.Sprintf("rc-%05d", i), "demo-task:latest", replicas, nil)
				// every task reserves memory and CPU, so that placement
				// checks the room of each node it considers
				c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
				c.Memory, c.CPU = 32<<20, 32
				data, err := api.Encode(rc)
				if err != nil {
					b.Fatal(err)
				}
				ops = append(ops, clientv3.OpPut(store.ControllerKey(rc.ID), string(data)))
			}
			if _, err := client.Txn(ctx).Then(ops...).Commit(); err != nil {
				b.Fatal(err)
			}
		}
		leases := make(map[string]clientv3.LeaseID, nodes)
		for i := range nodes {
			name := fmt.Sprintf("node-%03d", i)
			lease, err := client.Grant(ctx, 3600) // outlives the benchmark
			if err != nil {
				b.Fatal(err)
			}
			node := &api.Node{Name: name, EngineID: "engine-" + name, Capacity: api.NodeCapacity{CPUs: 64, Memory: 64 << 30},
				Lease: fmt.Sprintf("%x", int64(lease.ID)), RegisteredAt: time.Now().UTC()}
			if err := store.RegisterNode(ctx, node, lease.ID); err != nil {
				b.Fatal(err)
			}
			leases[name] = lease.ID
		}
		return store, leases
	}
	slots := controllers * replicas
	var store *registry.Store
	var leases map[string]clientv3.LeaseID
	var tally *assignmentTally
	var stop func()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	// converged is the scheduler of the last first assignment, or a new
	// one when -bench left that out
	converged := func(b *testing.B) {
		b.Helper()
		if stop != nil {
			return
		}
		store, leases = setup()
		tally = watchAssignments(b, ctx, client, store)
		stop = scheduler(store, time.Hour)
		tally.until(b, "every slot assigned", func() bool { return len(tally.nodeOf) == slots })
	}
	name := fmt.Sprintf("controllers=%d/replicas=%d/nodes=%d", controllers, replicas, nodes)

	// from the scheduler's start, with every spec and node in etcd, until
	// every slot's assignment key exists
	b.Run(name+"/first-assignment", func(b *testing.B) {
		var took time.Duration
		for b.Loop() {
			b.StopTimer()
			if stop != nil {
				stop()
			}
			store, leases = setup()
			tally = watchAssignments(b, ctx, client, store)
			b.StartTimer()
			start := time.Now()
			stop = scheduler(store, time.Hour)
			at := tally.until(b, "every slot assigned", func() bool { return len(tally.nodeOf) == slots })
			took += at.Sub(start)
		}
		b.ReportMetric(took.Seconds()/float64(b.N), "assigned-sec/op")
	})
	// the busiest node's lease revoked until each of its slots is on
	// another node, its grace included (no periodic pass meanwhile)
	b.Run(name+"/dead-node", func(b *testing.B) {
		converged(b)
		var took time.Duration
		var moved int
		for b.Loop() {
			if len(leases) < 2 {
				b.Skip("no second node left to take the slots")
			}
			tally.mu.Lock()
			busiest, most := "", -1
			for node := range leases {
				if n := tally.slotsOn(node); n > most {
					busiest, most = node, n
				}
			}
			tally.mu.Unlock()
			start := time.Now()
			if _, err := client.Revoke(ctx, leases[busiest]); err != nil {
				b.Fatal(err)
			}
			delete(leases, busiest)
			at := tally.until(b, "the slots of "+busiest+" moved", func() bool { return tally.slotsOn(busiest) == 0 })
			took, moved = took+at.Sub(start), moved+most
		}
		b.ReportMetric(took.Seconds()/float64(b.N), "moved-sec/op")
		b.ReportMetric(float64(moved)/float64(b.N), "slots-moved/op")
	})
	// a new leader (a second scheduler of a 1s sync period) over the
	// converged assignments: the assignment writes of each of its sync
	// periods once its first pass is over
	b.Run(name+"/steady-period", func(b *testing.B) {
		converged(b)
		stop()
		stop = scheduler(store, time.Second)
		// its first pass is over once etcd's revision holds for a period
		revision := func() int64 {
			resp, err := client.Get(ctx, "rm-bench-revision", clientv3.WithCountOnly())
			if err != nil {
				b.Fatal(err)
			}
			return resp.Header.Revision
		}
		for last, deadline := int64(-1), time.Now().Add(nodesTimeout); ; {
			time.Sleep(time.Second)
			rev := revision()
			if rev == last {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the new leader still writes after %s", nodesTimeout)
			}
			last = rev
		}
		before := tally.writeCount()
		for b.Loop() {
			time.Sleep(time.Second)
		}
		b.ReportMetric(float64(tally.writeCount()-before)/float64(b.N), "assignment-writes/op")
	})
}
