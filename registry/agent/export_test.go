package agent

// This file exposes to the package's external tests (package agent_test),
// which build their managers as the daemon does (registry/roles), the
// steps of a manager they take by hand instead of running it, and the
// package's embedded etcd.

import (
	"context"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// EtcdClient returns a client of the package's embedded etcd.
func EtcdClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return testClient(tb)
}

// TestRegistryID is the registry id SetRegistryID gives in the tests.
const TestRegistryID = testRegistryID

// SetRegistryID sets the registry id Run would read from etcd.
func (rm *Agent) SetRegistryID(id string) { rm.registryID = id }

// MarkSpecsListed has the spec cache count as listed, as after Run's
// first list: an unknown controller counts as deleted.
func (rm *Agent) MarkSpecsListed() {
	rm.specs.mu.Lock()
	rm.specs.listed = true
	rm.specs.mu.Unlock()
}

// PutSpec puts spec into the spec cache, as the watch does.
func (rm *Agent) PutSpec(spec registry.Spec) { rm.specs.put(spec) }

// Slots is the node's cache of its assignments, for a mirror's list.
func (rm *Agent) Slots() registry.MirrorTarget { return rm.slots }

// RelistTasks lists the node's containers again, as a resync does.
func (rm *Agent) RelistTasks(ctx context.Context) error { return rm.relistTasks(ctx) }

// SyncSlots is one sync of controller id, as a worker runs it.
func (rm *Agent) SyncSlots(ctx context.Context, id string) error { return rm.syncSlots(ctx, id) }

// RemoveSpec records in the spec cache that id was deleted at rev, as the
// watch does.
func (rm *Agent) RemoveSpec(id string, rev int64) { rm.specs.remove(id, rev) }

// Lease is the lease the manager reports under.
func (rm *Agent) Lease() clientv3.LeaseID { return rm.opts.Node.Lease }

// RunBackground writes the manager's events and feeds its queue's second
// lane, as Run does, until ctx ends: for syncs called by hand.
func (rm *Agent) RunBackground(ctx context.Context) {
	var background sync.WaitGroup
	background.Go(func() { rm.events.run(ctx) })
	background.Go(func() { rm.feed(ctx) })
	background.Wait()
}

// StopQueues shuts the manager's work queue and its pulls down, as Run
// does when it ends.
func (rm *Agent) StopQueues() {
	rm.queue.ShutDown()
	rm.pulls.stop()
}

// FollowTasks runs the container watch (a list, then the events) until
// ctx ends, as Run does.
func (rm *Agent) FollowTasks(ctx context.Context) error { return rm.followTasks(ctx) }

// TasksSynced reports whether the container cache holds a list.
func (rm *Agent) TasksSynced() bool { return rm.tasks.isSynced() }

// CachedTasks are the container cache's containers of controller id.
func (rm *Agent) CachedTasks(id string) []api.Task {
	tasks, _ := rm.tasks.list(id)
	return tasks
}

// TaskEvent applies a Docker event to the container cache, as the watch
// does.
func (rm *Agent) TaskEvent(ev api.TaskEvent) { rm.tasks.event(ev) }

// LastCrash is the latest crash in the crash-loop histories of
// controller id's slots: its exit code, when it died and how long it ran;
// ok is false when there is none. Only while no worker syncs id.
func (rm *Agent) LastCrash(id string) (exitCode int, at time.Time, ranFor time.Duration, ok bool) {
	last := rm.states.get(id).crashes.latest().last
	if last == nil {
		return 0, time.Time{}, 0, false
	}
	return last.exitCode, last.at, last.ranFor, true
}

// PullMaxDelay is the longest wait before a failed pull is tried again.
const PullMaxDelay = pullMaxDelay

// Pulling returns an image the node is pulling, if any.
func (rm *Agent) Pulling() (image string, ok bool) {
	rm.pulls.mu.Lock()
	defer rm.pulls.mu.Unlock()
	for image, ip := range rm.pulls.images {
		if ip.running {
			return image, true
		}
	}
	return "", false
}

// Remembers reports whether the manager still holds controller id's
// tombstone in its spec cache, and a record of its sync state.
func (rm *Agent) Remembers(id string) (tombstone, record bool) {
	return rm.specs.wasDeleted(id), rm.states.known(id)
}

// QueueLen is how many controllers wait in the manager's work queue.
func (rm *Agent) QueueLen() int { return rm.queue.Len() }

// The names and errors the node's syncs give, and their first backoff.
var (
	DeadName           = deadName
	ErrNotListed       = errNotListed
	CreateBackoffStart = createBackoffStart
)

// SpecsListed is closed once the spec cache holds Run's first list.
func (rm *Agent) SpecsListed() <-chan struct{} { return rm.specs.listedCh }

// The backoffs of the node's creates and crash loops, and how long a
// created container may stay unstarted.
const (
	CreateBackoffMax  = createBackoffMax
	CrashBackoffStart = crashBackoffStart
	CrashMinRun       = crashMinRun
	PendingGrace      = pendingGrace
)

// SyncRecovering is one sync of controller id as a worker runs it, a
// panic returned as an error.
func (rm *Agent) SyncRecovering(ctx context.Context, id string) error {
	return rm.syncRecovering(ctx, id)
}

// CreateFailures and CrashFailures are the failures in a row that the
// create backoff of controller id and the crash-loop backoff of its slot
// count. Only while no worker syncs id.
func (rm *Agent) CreateFailures(id string) int { return rm.states.get(id).createBackoff.failures }

func (rm *Agent) CrashFailures(id string, slot int) int {
	return rm.states.get(id).crashes[slot].backoff.failures
}

// CrashWait is how long the next create of controller id's slot waits out
// its crash-loop backoff. Only while no worker syncs id.
func (rm *Agent) CrashWait(id string, slot int) time.Duration {
	return rm.states.get(id).crashes.wait(slot, rm.now())
}

// SpecMirror is the node's spec watch's target, for a mirror's list or
// events by hand.
func (rm *Agent) SpecMirror() registry.MirrorTarget {
	return &specMirror{rm: rm, ignored: map[string]bool{}}
}

// CachedSpec is the spec cache's spec of id.
func (rm *Agent) CachedSpec(id string) (registry.Spec, bool) {
	spec, ok, _ := rm.specs.get(id)
	return spec, ok
}

// SpecIDs are the ids in the spec cache.
func (rm *Agent) SpecIDs() []string { return rm.specs.ids() }

// ApplyEvent applies a spec event, as the watch does: it queues the
// controller, or puts it in the second lane.
func (rm *Agent) ApplyEvent(ev registry.ControllerEvent) { rm.applyEvent(ev) }

// Enqueue queues controller id, as an event does.
func (rm *Agent) Enqueue(id string) { rm.queue.Add(id) }

// Take waits for the next controller of the queue, as a worker does; the
// caller calls Finished with it once done.
func (rm *Agent) Take() string {
	id, _ := rm.queue.Get()
	return id
}

// Finished ends a worker's hold on id.
func (rm *Agent) Finished(id string) { rm.finished(id) }

// Drain empties both lanes, the queue and the feeder's, and returns what
// was in them. Its callers stop the feeder first (RunBackground), so that
// nothing moves between the lanes meanwhile.
func (rm *Agent) Drain() []string {
	var out []string
	for rm.queue.Len() > 0 {
		id, _ := rm.queue.Get()
		rm.finished(id)
		rm.queue.Forget(id)
		out = append(out, id)
	}
	for id, ok := rm.background.pop(); ok; id, ok = rm.background.pop() {
		out = append(out, id)
	}
	return out
}

// BackgroundBacklog is how many controllers a resync keeps queued ahead of
// an event's.
func (rm *Agent) BackgroundBacklog() int { return rm.backgroundBacklog() }
