package registry

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

// goneTTL is how long the id of a container the manager removed is
// remembered, so that a late event or a stale list cannot bring it back.
// Container ids are never reused.
const goneTTL = 10 * time.Minute

// taskCache holds the containers that carry the ownership label, by
// controller. Tasks handed out are copies that share their label maps with
// the cache: label maps come fresh from the task control and are never
// changed afterwards, by the cache or by anyone it hands them to.
type taskCache struct {
	mu     sync.Mutex
	tasks  map[string]api.Task            // container id -> task
	byRC   map[string]map[string]struct{} // controller id -> container ids
	synced bool

	// seq orders the manager's own writes against lists: a list started at
	// seq s has not seen the writes numbered above s.
	seq     uint64
	written map[string]uint64    // container id -> seq of our create/rename
	gone    map[string]time.Time // container id -> when we removed it
}

func newTaskCache() *taskCache {
	return &taskCache{
		tasks:   make(map[string]api.Task),
		byRC:    make(map[string]map[string]struct{}),
		written: make(map[string]uint64),
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
// keeping the manager's writes made after it started. It updates the cache
// in place, so an unchanged container costs a lookup, not a copy, and
// returns the controllers whose containers changed.
func (c *taskCache) replace(listed []api.Task, since uint64, now time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := make(map[string]struct{})
	seen := make(map[string]struct{}, len(listed))
	for _, t := range listed {
		if _, ok := t.Labels[api.LabelController]; !ok {
			continue
		}
		if _, removed := c.gone[t.ID]; removed {
			continue
		}
		seen[t.ID] = struct{}{}
		if o, ok := c.tasks[t.ID]; ok {
			if seq := c.written[t.ID]; seq > since || sameTask(o, t) {
				// our write is newer than what the list saw, or nothing
				// changed and the entry has the inspect's start and
				// finish times, which a list lacks
				continue
			}
			changed[o.Labels[api.LabelController]] = struct{}{}
		}
		changed[t.Labels[api.LabelController]] = struct{}{}
		c.insertLocked(t)
	}
	for id, t := range c.tasks {
		if _, ok := seen[id]; ok {
			continue
		}
		if seq := c.written[id]; seq > since {
			continue // created after the list started
		}
		changed[t.Labels[api.LabelController]] = struct{}{}
		c.removeLocked(id)
	}
	for id, seq := range c.written {
		if seq <= since {
			delete(c.written, id) // the list has seen it (or it is gone)
		}
	}
	for id, at := range c.gone {
		if now.Sub(at) > goneTTL {
			delete(c.gone, id)
		}
	}
	c.synced = true
	out := make([]string, 0, len(changed))
	for id := range changed {
		out = append(out, id)
	}
	return out
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
	c.insertLocked(t)
	return true
}

// forget drops a container that Docker says is gone.
func (c *taskCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(id)
}

// created writes a container the manager has just created.
func (c *taskCache) created(t api.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.written[t.ID] = c.seq
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
	c.written[id] = c.seq
	t.Name = name
	c.tasks[id] = t
}

// deleted records the manager's removal of a container.
func (c *taskCache) deleted(id string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone[id] = now
	delete(c.written, id)
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
		a.ExitCode == b.ExitCode && a.Labels[api.LabelController] == b.Labels[api.LabelController]
}

// isSynced reports whether a list has been installed.
func (c *taskCache) isSynced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synced
}
