package agent

// This file is the manager's view of the containers: one list plus the
// Docker events stream, so that a sync reads memory instead of calling
// Docker. Events are hints (the daemon drops them under load): the cache is
// relisted when the stream breaks and at every resync.
//
// The manager's own creates and deletes are written through to the cache
// at once (the expectations of the modern controllers): a sync never acts
// twice on containers it has just created or removed, even when a list that
// started before the change lands after it.

import (
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// goneTTL is how long the id of a removed container is remembered, so
// that a late event or a stale list cannot bring it back. Container ids
// are never reused.
const goneTTL = 10 * time.Minute

// replaceChunk is how many containers a relist applies per hold of the
// lock, so that a sync reading the cache never waits behind a whole list.
const replaceChunk = 512

// taskCache holds the containers that carry the ownership label, by
// controller. Tasks handed out are copies that share their label maps with
// the cache: label maps come fresh from the task control and are never
// changed afterwards, by the cache or by anyone it hands them to.
//
// Every change the cache learns outside a list (the manager's own create,
// rename or delete, an event's inspect, a destroy event) gets a sequence
// number. A list started at sequence number s knows nothing newer: it does
// not override a container changed after s, does not remove one created
// after s, and does not bring back one removed at all. So two lists, or a
// list and an event, can land in any order without hiding a death or a
// create.
type taskCache struct {
	mu     sync.Mutex
	tasks  map[string]api.Task            // container id -> task
	byRC   map[string]map[string]struct{} // controller id -> container ids
	synced bool

	seq     uint64
	listed  uint64               // sequence number the installed list started at
	touched map[string]uint64    // container id -> seq of its newest change
	gone    map[string]time.Time // container id -> when it was removed
}

func newTaskCache() *taskCache {
	return &taskCache{
		tasks:   make(map[string]api.Task),
		byRC:    make(map[string]map[string]struct{}),
		touched: make(map[string]uint64),
		gone:    make(map[string]time.Time),
	}
}

// list returns the containers of a controller, or false when the cache has
// not been filled yet.
func (c *taskCache) list(rcID string) ([]api.Task, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.synced {
		return nil, false
	}
	ids := c.byRC[rcID]
	out := make([]api.Task, 0, len(ids))
	for id := range ids {
		out = append(out, c.tasks[id])
	}
	return out, true
}

// startList returns the sequence number a list starting now must pass to
// replace.
func (c *taskCache) startList() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// replace installs a full list that was started at sequence number since,
// keeping what the cache learned after it started, and returns the
// controllers whose containers changed. A list older than the one
// installed is dropped. It updates the cache in place, a chunk at a time,
// so an unchanged container costs a lookup, not a copy, and readers wait
// for a chunk, not for the list. Callers run one replace at a time.
func (c *taskCache) replace(listed []api.Task, since uint64, now time.Time) []string {
	c.mu.Lock()
	stale := c.synced && since < c.listed
	c.mu.Unlock()
	if stale {
		return nil
	}
	changed := make(map[string]struct{})
	seen := make(map[string]struct{}, len(listed))
	for start := 0; start < len(listed); start += replaceChunk {
		c.mu.Lock()
		for _, t := range listed[start:min(start+replaceChunk, len(listed))] {
			c.applyListedLocked(t, since, seen, changed)
		}
		c.mu.Unlock()
	}

	// what the list did not see goes, a few controllers per hold of the
	// lock (a scan of every container under one hold would be the stall
	// that chunking avoids)
	c.mu.Lock()
	rcs := make([]string, 0, len(c.byRC))
	for rc := range c.byRC {
		rcs = append(rcs, rc)
	}
	c.mu.Unlock()
	perHold := max(1, replaceChunk/max(1, len(listed)/max(1, len(rcs))))
	for start := 0; start < len(rcs); start += perHold {
		c.mu.Lock()
		for _, rc := range rcs[start:min(start+perHold, len(rcs))] {
			for id := range c.byRC[rc] {
				if _, ok := seen[id]; ok || c.touched[id] > since {
					continue // listed, or created after the list started
				}
				changed[rc] = struct{}{}
				c.removeLocked(id)
			}
		}
		c.mu.Unlock()
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	for id, seq := range c.touched {
		if seq <= since {
			delete(c.touched, id) // the list has seen it (or it is gone)
		}
	}
	for id, at := range c.gone {
		if now.Sub(at) > goneTTL {
			delete(c.gone, id)
		}
	}
	c.listed = since
	c.synced = true
	out := make([]string, 0, len(changed))
	for id := range changed {
		out = append(out, id)
	}
	return out
}

// applyListedLocked installs one listed container unless the cache knows
// better.
func (c *taskCache) applyListedLocked(t api.Task, since uint64, seen, changed map[string]struct{}) {
	if _, ok := t.Labels[api.LabelController]; !ok {
		return
	}
	if _, removed := c.gone[t.ID]; removed {
		return
	}
	seen[t.ID] = struct{}{}
	o, ok := c.tasks[t.ID]
	if ok {
		if c.touched[t.ID] > since || sameTask(o, t) {
			// the cache learned of a newer change than the list saw, or
			// nothing changed and the entry has the inspect's start and
			// finish times, which a list lacks
			return
		}
		changed[o.Labels[api.LabelController]] = struct{}{}
	} else if c.touched[t.ID] > since {
		return
	}
	changed[t.Labels[api.LabelController]] = struct{}{}
	c.insertLocked(t)
}

// observe records a container as an event's inspect saw it. A container the
// manager removed is ignored. It reports whether anything changed.
func (c *taskCache) observe(t api.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, removed := c.gone[t.ID]; removed {
		return false
	}
	if _, ok := t.Labels[api.LabelController]; !ok {
		return false
	}
	if old, ok := c.tasks[t.ID]; ok {
		if sameTask(old, t) {
			return false
		}
		if t.State == api.StateCreated && old.State != api.StateCreated {
			// a container never goes back to created: this inspect was
			// made before a start the cache already knows of
			return false
		}
	}
	c.seq++
	c.touched[t.ID] = c.seq
	c.insertLocked(t)
	return true
}

// created writes a container the manager has just created.
func (c *taskCache) created(t api.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.touched[t.ID] = c.seq
	c.insertLocked(t)
}

// renamed records the manager's rename of a container.
func (c *taskCache) renamed(id, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tasks[id]
	if !ok {
		return
	}
	c.seq++
	c.touched[id] = c.seq
	t.Name = name
	c.tasks[id] = t
}

// deleted records the removal of a container, by the manager or as a
// destroy event reports it.
func (c *taskCache) deleted(id string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone[id] = now
	delete(c.touched, id)
	c.removeLocked(id)
}

func (c *taskCache) insertLocked(t api.Task) {
	c.removeLocked(t.ID) // its controller label may have changed
	c.tasks[t.ID] = t
	rc := t.Labels[api.LabelController]
	if c.byRC[rc] == nil {
		c.byRC[rc] = make(map[string]struct{})
	}
	c.byRC[rc][t.ID] = struct{}{}
}

func (c *taskCache) removeLocked(id string) {
	t, ok := c.tasks[id]
	if !ok {
		return
	}
	delete(c.tasks, id)
	rc := t.Labels[api.LabelController]
	delete(c.byRC[rc], id)
	if len(c.byRC[rc]) == 0 {
		delete(c.byRC, rc)
	}
}

// sameTask compares what a sync looks at: a list and an inspect of the same
// unchanged container agree on these.
func sameTask(a, b api.Task) bool {
	return a.ID == b.ID && a.Name == b.Name && a.State == b.State && a.Health == b.Health &&
		a.Labels[api.LabelController] == b.Labels[api.LabelController]
}

// isGone reports whether the container was removed, as far as the cache
// knows.
func (c *taskCache) isGone(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.gone[id]
	return ok
}

// isSynced reports whether a list has been installed.
func (c *taskCache) isSynced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synced
}
