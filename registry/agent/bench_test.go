package agent

// Benchmarks of the hot paths of one host as it ships, run by `make
// bench`: the leader's decision for one controller and the relist that
// every resync starts with (the leader's and the node's sync of a
// controller that has nothing to do are in hostbench_test.go). They use
// the package's embedded etcd and the in-memory fake.

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// BenchmarkDecide is the leader's decision for one settled controller of
// replicas over 100 nodes, and for a new one.
func BenchmarkDecide(b *testing.B) {
	nodes := make([]decide.Node, 100)
	for i := range nodes {
		nodes[i] = decide.Node{Name: fmt.Sprintf("node-%03d", i), Alive: true, Slots: 1000}
	}
	now := time.Now()
	for _, replicas := range []int{10, 1000} {
		c := decide.Controller{ID: "web", Replicas: replicas, Revision: 2, Hash: "h", Unavailable: 1, AvailableAfter: 5 * time.Second}
		settled := decide.Input{Controller: c, Assigned: map[int]decide.Assignment{}, Nodes: nodes, Now: now,
			Reports: map[string]decide.Report{}}
		for slot := 1; slot <= replicas; slot++ {
			node := nodes[slot%len(nodes)].Name
			settled.Assigned[slot] = decide.Assignment{Node: node, Revision: 2, Hash: "h", ModRev: 3}
			settled.Containers = append(settled.Containers, decide.Container{Node: node, Slot: slot, Named: true, Hash: "h",
				Live: true, Ready: true, StartedAt: now.Add(-time.Hour)})
		}
		b.Run(fmt.Sprintf("settled/replicas=%d", replicas), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := decide.Decide(settled); len(r.Changes) != 0 {
					b.Fatalf("%d changes to a settled controller", len(r.Changes))
				}
			}
		})
		b.Run(fmt.Sprintf("new/replicas=%d", replicas), func(b *testing.B) {
			in := decide.Input{Controller: c, Nodes: nodes, Now: now}
			b.ReportAllocs()
			for b.Loop() {
				if r := decide.Decide(in); len(r.Changes) != replicas {
					b.Fatalf("%d changes, want %d", len(r.Changes), replicas)
				}
			}
		})
	}
	// a new controller whose tasks reserve memory and CPU, over nodes of
	// uneven load, as BenchmarkSchedulerNodes (registry/leader) places them
	loaded := make([]decide.Node, len(nodes))
	for i := range loaded {
		loaded[i] = decide.Node{Name: nodes[i].Name, Alive: true, Slots: (i * 37) % 1000,
			Capacity: decide.Resources{Memory: 64 << 30, CPU: 64 * 1024}, Used: decide.Resources{Memory: int64(i) << 25, CPU: int64(i) * 32}}
	}
	c := decide.Controller{ID: "web", Replicas: 10, Revision: 2, Hash: "h", Unavailable: 1, AvailableAfter: 5 * time.Second,
		Reserve: decide.Resources{Memory: 32 << 20, CPU: 32}}
	b.Run("new-reserving/replicas=10", func(b *testing.B) {
		in := decide.Input{Controller: c, Nodes: loaded, Now: now}
		b.ReportAllocs()
		for b.Loop() {
			if r := decide.Decide(in); len(r.Changes) != 10 {
				b.Fatalf("%d changes, want 10", len(r.Changes))
			}
		}
	})
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
				Name: api.TaskName(id, slot),
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
	store := registry.NewStore(etcdServer.Client(b), "/bench/"+b.Name())
	rm := New(store, fake, slog.New(slog.DiscardHandler), Options{SyncPeriod: time.Hour, Node: NodeOptions{Name: testNode}})
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
		if drift := c.replace(listed, c.startList(), now); drift.containers != 0 {
			b.Fatalf("%d containers changed, want none", drift.containers)
		}
	}
}
