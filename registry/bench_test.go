package registry

// Benchmarks of the manager's hot paths, run by `make bench`: the sync of
// one controller that has nothing to do (what every resync costs per
// controller), the pure diff functions, and the relist that every resync
// starts with. They use the package's embedded etcd and the in-memory fake.

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// newBenchManager returns a manager on the fake and the package's etcd,
// with a resync period long enough that no status is due during a
// benchmark.
func newBenchManager(b *testing.B) (*ReplicationManager, *taskcontrol.Fake) {
	b.Helper()
	store := NewStore(etcdServer.Client(b), "/bench/"+b.Name())
	fake := &taskcontrol.Fake{}
	rm := NewReplicationManager(store, fake, slog.New(slog.DiscardHandler), Options{SyncPeriod: time.Hour})
	b.Cleanup(rm.queue.ShutDown)
	rm.specs.mu.Lock()
	rm.specs.listed = true
	rm.specs.mu.Unlock()
	return rm, fake
}

// BenchmarkSyncReplicationController is one sync of a controller whose
// replicas all run: the diff finds nothing to do and the status is
// unchanged, so the sync makes no call to Docker or etcd. A resync costs
// this once per controller.
func BenchmarkSyncReplicationController(b *testing.B) {
	for _, replicas := range []int{10, 100} {
		b.Run(fmt.Sprintf("steady/replicas=%d", replicas), func(b *testing.B) {
			rm, fake := newBenchManager(b)
			ctx := b.Context()
			rm.specs.put(Spec{ID: "web", Controller: newController("web", replicas), ModRevision: 1})
			if err := rm.relistTasks(ctx); err != nil {
				b.Fatal(err)
			}
			for range 2 { // the first sync creates, the second sees them settled
				if err := rm.syncReplicationController(ctx, "web"); err != nil {
					b.Fatal(err)
				}
			}
			if got := fake.Len(); got != replicas {
				b.Fatalf("%d containers after the first syncs, want %d", got, replicas)
			}
			fake.Reset()

			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := rm.syncReplicationController(ctx, "web"); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if c := fake.Counts(); c.Create+c.Delete+c.List+c.Inspect+c.Rename != 0 {
				b.Errorf("a steady sync called the task control: %+v", c)
			}
		})
	}
}

// benchTasks returns n tasks of controller web in slots 1..n, leaving out
// every third slot, with a mix of states and health.
func benchTasks(n int) []api.Task {
	var tasks []api.Task
	start := time.Unix(1_000_000, 0)
	for slot := 1; len(tasks) < n; slot++ {
		if slot%3 == 0 {
			continue
		}
		t := api.Task{
			ID:      fmt.Sprintf("%064d", slot),
			Name:    taskName("web", slot),
			Labels:  map[string]string{"name": "web", api.LabelController: "web", api.LabelSlot: strconv.Itoa(slot)},
			State:   api.StateRunning,
			Created: start.Add(time.Duration(slot%7) * time.Second),
		}
		switch slot % 5 {
		case 0:
			t.State = api.StateExited
		case 1:
			t.Health = api.HealthStarting
		}
		tasks = append(tasks, t)
	}
	return tasks
}

// BenchmarkRankForDeletion orders a controller's replicas for a
// scale-down.
func BenchmarkRankForDeletion(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			tasks := benchTasks(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = rankForDeletion(tasks, "")
			}
		})
	}
}

// BenchmarkFreeSlots finds the slots of a scale-up that fills the holes
// left by every third slot and goes beyond.
func BenchmarkFreeSlots(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			taken := make(map[int]bool)
			for _, t := range benchTasks(n) {
				taken[slotOf(t)] = true
			}
			want := n/2 + 1
			b.ReportAllocs()
			for b.Loop() {
				if got := freeSlots(taken, nil, want, n+want); len(got) != want {
					b.Fatalf("%d slots, want %d", len(got), want)
				}
			}
		})
	}
}

// fakeWithContainers returns a fake holding controllers × replicas running
// containers, labelled as the manager labels them.
func fakeWithContainers(b *testing.B, controllers, replicas int) *taskcontrol.Fake {
	b.Helper()
	fake := &taskcontrol.Fake{}
	for c := range controllers {
		id := fmt.Sprintf("rc-%05d", c)
		for slot := 1; slot <= replicas; slot++ {
			_, err := fake.Add(api.Task{
				Name: taskName(id, slot),
				Labels: map[string]string{
					"name": id, "tier": "demo", api.LabelController: id,
					api.LabelSlot: strconv.Itoa(slot), api.LabelTemplateHash: "0123456789",
				},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	return fake
}

// BenchmarkRelistTasks is the list every resync starts with, of 10,000
// controllers × 10 containers: the fake's list, then the cache rebuilt
// from it. Nothing changed, so no controller is queued.
func BenchmarkRelistTasks(b *testing.B) {
	fake := fakeWithContainers(b, 10000, 10)
	store := NewStore(etcdServer.Client(b), "/bench/"+b.Name())
	rm := NewReplicationManager(store, fake, slog.New(slog.DiscardHandler), Options{SyncPeriod: time.Hour})
	b.Cleanup(rm.queue.ShutDown)
	ctx := b.Context()
	if err := rm.relistTasks(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := rm.relistTasks(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTaskCacheReplace is the cache's part of that relist alone:
// installing a list of 100,000 unchanged containers.
func BenchmarkTaskCacheReplace(b *testing.B) {
	listed, err := fakeWithContainers(b, 10000, 10).ListTasks(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	c := newTaskCache()
	now := time.Now()
	c.replace(listed, c.startList(), now)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if changed := c.replace(listed, c.startList(), now); len(changed) != 0 {
			b.Fatalf("%d controllers changed, want none", len(changed))
		}
	}
}
