package agent

// This file is the periodic pass's short way through a sync: a controller
// whose last sync found it calm (nothing done, nothing to wait for) and
// whose inputs have not changed since is found to have nothing to do
// without planning again. The inputs are versioned where they live (the
// spec by its revision, the assignments and the containers by a counter
// each cache keeps per controller), and every wake-up other than the
// periodic pass's is counted, so that an input without a version (a pull
// that ended, a timer) still leads to a full sync. A change a cache took
// in without waking the controller (an event whose wake-up went missing)
// changes its version: the next pass syncs it in full, as the contract's
// --sync-period promises.

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/replication-manager/replication-manager/registry"
)

// syncInputs are the versions of what a sync of one controller reads.
type syncInputs struct {
	spec         int64 // the spec's ModRevision
	slots, tasks uint64
	wakes        uint64
}

// inputsOf reads the versions of id's inputs; spec is the spec the sync
// read. It is read before the inputs themselves: a change that lands
// between the two makes the next pass's versions differ, never the same.
func (rm *Agent) inputsOf(id string, spec registry.Spec) syncInputs {
	return syncInputs{spec: spec.ModRevision, slots: rm.slots.versionOf(id), tasks: rm.tasks.versionOf(id), wakes: rm.wakes.count(id)}
}

// unchanged reports whether id's last sync was calm and nothing it reads
// has changed since: its sync would find nothing to do.
func (rm *Agent) unchanged(id string) bool {
	spec, exists, known := rm.specs.get(id)
	return known && exists && rm.states.calmAt(id, rm.inputsOf(id, spec))
}

// calm reports whether a sync found the controller with nothing to do and
// nothing to wait for: a valid spec, no error, no container created,
// removed or renamed, no event, no write of its report, no later look
// asked for, and a record that waits on no clock (no backoff, no crash,
// no slot held by an outsider, no pull, a finished rollout).
func calm(in planInput, d decision, out outcome, r report, wrote bool, err error) bool {
	s := r.state
	return err == nil && in.spec != nil && in.invalid == nil && r.status != nil && !wrote &&
		len(d.creates) == 0 && len(d.deletes) == 0 && len(d.renames) == 0 && len(d.unhealthy) == 0 && !d.more &&
		len(out.created) == 0 && len(out.deleted) == 0 && !out.retry && len(out.waiting) == 0 &&
		len(r.events) == 0 && r.requeueAfter == 0 && !r.continueRollout && !r.forget &&
		len(r.blocked) == 0 && len(r.pulling) == 0 &&
		s.createBackoff.failures == 0 && s.initBackoff.failures == 0 &&
		s.crashes.calm() &&
		len(s.conflicts) == 0 && s.pullSince.IsZero() && s.rollout.done
}

// wakes counts each controller's wake-ups but the periodic pass's.
type wakes struct {
	mu sync.Mutex
	m  map[string]uint64
}

func (w *wakes) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]uint64{}
	}
	w.m[id]++
}

func (w *wakes) count(id string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[id]
}

func (w *wakes) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, id)
}

// wakingQueue is the work queue, counting every controller it is given
// as woken. The periodic pass goes by the feeder, which adds to the queue
// beneath (addFed).
type wakingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	wakes *wakes
}

func (q wakingQueue) Add(id string) {
	q.wakes.wake(id)
	q.TypedRateLimitingInterface.Add(id)
}

func (q wakingQueue) AddAfter(id string, d time.Duration) {
	q.wakes.wake(id)
	q.TypedRateLimitingInterface.AddAfter(id, d)
}

func (q wakingQueue) AddRateLimited(id string) {
	q.wakes.wake(id)
	q.TypedRateLimitingInterface.AddRateLimited(id)
}

// addFed adds an id the feeder hands on: counted as woken already when it
// came by later, and not at all when it came with the periodic pass.
func (q wakingQueue) addFed(id string) { q.TypedRateLimitingInterface.Add(id) }
