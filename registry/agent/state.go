package agent

// This file is the manager's memory of each controller: one record per
// controller, holding everything a sync learns and the next sync needs
// (backoffs, crash history, the proven template, slot conflicts, the last
// status and the validation result). The worker holding the controller's
// key in the work queue owns its record: the queue never hands one key to
// two workers at once, so a record needs no lock of its own. The map of
// records has one, for the goroutines that only read what a worker
// published of its controller: whether it is known (the watches, the
// orphan sweep), whether its last sync was calm (the periodic pass), and
// its last reported status (the status page).

import (
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/replication-manager/replication-manager/api"
)

// controllerState is what the manager remembers of one controller between
// syncs. plan reads it and returns the next one; apply records outcomes in
// it. Maps in it are replaced, never changed in place, so a copy is safe.
type controllerState struct {
	// status is the last status written (or read at start); nil for none.
	status *api.ReplicationControllerStatus
	// validated is the validation result of one spec revision.
	validated validation
	// incarnation is the CreateRevision of the spec whose containers are
	// on the host; a spec created again under the same id has a newer one.
	incarnation int64

	// createBackoff spaces out creates after a failed one (a missing
	// image, a refusing daemon).
	createBackoff backoff
	// crashes are the slots' crash loops (crashloop.go).
	crashes crashLoops
	// initBackoff spaces out the tries of a task whose init container
	// failed, with the crash-loop delays.
	initBackoff backoff
	// keptInits are the failed init containers kept for inspection, by
	// slot: the id of each slot's last failed one.
	keptInits map[int]string
	// proven is the template hash whose last creates all succeeded: its
	// image is known to exist, so creates go out in one batch.
	proven string
	// pullSince is when creates of a template pulled Always first asked
	// for their pull: a pull begun since then will do.
	pullSince time.Time
	// conflicts holds the slots whose name a container outside the set
	// holds, learned from a create that Docker refused with a conflict.
	conflicts map[int]slotConflict
	// rollout tracks the progress towards the current template.
	rollout rolloutProgress
	// reported says this node has a report on the controller in etcd, and
	// the reported fields what it listed: its tasks by their digest
	// (reportdigest.go).
	reported             bool
	reportedDigest       uint64
	reportedBlocked      []int
	reportedSlots        []int
	reportedStartedFirst []int
	reportedPulling      []api.PullingSlot
	// templates are the templates of the controller's history this node
	// has read, by hash, for slots assigned an older revision.
	templates map[string]*api.TaskTemplate
}

// validation is the result of validating one spec revision, its
// template hash, and its monitor window (windows.go).
type validation struct {
	rev    int64
	err    error
	hash   string
	window time.Duration
}

// slotConflict is a container outside the controller's set that holds the
// name of one of its slots.
type slotConflict struct {
	holder string // the container's name and what it is
	seen   time.Time
}

// backoff is a wait.Backoff anchored in time: the delays of failures in a
// row, when the last one ends and how many there were. The zero value has
// no failures and does not wait; a success sets it back to zero. It is a
// value: failed returns the next one.
type backoff struct {
	// delays is what is left of the first failure's wait.Backoff.
	delays   wait.Backoff
	until    time.Time
	failures int
}

// failed records a failure at time at; delays builds the backoff that a
// first failure starts.
func (b backoff) failed(at time.Time, delays func() wait.Backoff) backoff {
	if b.failures == 0 {
		b.delays = delays()
	}
	b.failures++
	b.until = at.Add(b.delays.Step())
	return b
}

// wait is how long to wait at time now; 0 means go.
func (b backoff) wait(now time.Time) time.Duration {
	if !now.Before(b.until) {
		return 0
	}
	return b.until.Sub(now)
}

// createDelays space out creates after a failed one: 1s doubling to five
// minutes, so a refusing daemon costs a handful of calls a minute, not
// thousands.
func createDelays() wait.Backoff {
	return wait.Backoff{Duration: createBackoffStart, Factor: 2, Steps: math.MaxInt, Cap: createBackoffMax}
}

const (
	createBackoffStart = time.Second
	createBackoffMax   = 5 * time.Minute
)

// states is the node's map of controllers, one entry each, made by the
// controller's first sync or by the reports read at start.
type states struct {
	mu      sync.Mutex
	entries map[string]*stateEntry
}

// stateEntry is one controller's. Its record only the worker holding the
// controller's key reads or changes, without a lock; the rest other
// goroutines read too, under the map's lock: the versions of the inputs
// of its last sync when that sync was calm (quiet.go), and the status and
// the pulls its last report published (view.go).
type stateEntry struct {
	record    controllerState
	calm      *syncInputs
	published *api.ReplicationControllerStatus
	pulling   []api.PullingSlot
}

// get returns the record of id, making an empty one if there is none. Only
// the worker holding id's key may read or change the record it returns.
func (s *states) get(id string) *controllerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = make(map[string]*stateEntry)
	}
	e, ok := s.entries[id]
	if !ok {
		e = &stateEntry{}
		s.entries[id] = e
	}
	return &e.record
}

// known reports whether id has a record: this manager synced it, or found
// its status at start.
func (s *states) known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.entries[id]
	return ok
}

// ids returns the controllers that have a record.
func (s *states) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.entries))
	for id := range s.entries {
		out = append(out, id)
	}
	return out
}

// calmAt reports whether id's last sync was calm, at the versions inputs.
func (s *states) calmAt(id string, inputs syncInputs) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	return e != nil && e.calm != nil && *e.calm == inputs
}

// setCalm records whether id's last sync, of inputs, was calm.
func (s *states) setCalm(id string, inputs syncInputs, calm bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[id]; e != nil {
		e.calm = nil
		if calm {
			e.calm = &inputs
		}
	}
}

// publish records the status and the pulls id's report says now; nil
// for a controller of which the node reports nothing.
func (s *states) publish(id string, st *api.ReplicationControllerStatus, pulling []api.PullingSlot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[id]; e != nil {
		e.published, e.pulling = st, pulling
	}
}

// published returns the status and the pulls id's last report said, for
// readers outside the worker; they must not change them.
func (s *states) published(id string) (*api.ReplicationControllerStatus, []api.PullingSlot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[id]; e != nil {
		return e.published, e.pulling
	}
	return nil, nil
}

// loadReports installs what a node read at start: its own reports.
func (s *states) loadReports(reports map[string]*api.NodeReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = make(map[string]*stateEntry, len(reports))
	for id, r := range reports {
		st := r.Status
		s.entries[id] = &stateEntry{
			record: controllerState{status: &st, reported: true, reportedDigest: tasksDigest(r.Tasks), reportedBlocked: r.BlockedSlots,
				reportedSlots: r.Slots, reportedStartedFirst: r.StartedFirst, reportedPulling: r.Pulling},
			published: &st, pulling: r.Pulling,
		}
	}
}

// forget drops everything known of a controller that is gone.
func (s *states) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, id)
}
