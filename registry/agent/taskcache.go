package agent

// This file is the manager's view of the containers: one list plus the
// Docker events stream, so that a sync reads memory instead of calling
// Docker. Events are hints (the daemon drops them under load): the cache is
// relisted when the stream breaks and every --relist-period; a list that
// finds it wrong says how (drift.go).
//
// The manager's own creates and deletes are written through to the cache
// at once (the expectations of the modern controllers): a sync never acts
// twice on containers it has just created or removed, even when a list that
// started before the change lands after it.
//
// Events update the containers the cache knows from what the event itself
// tells (eventTask): no inspect per event. The events of a container the
// manager is creating arrive before its create returns; they are held
// until it does, then applied to what the create returned (created).

import (
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// goneTTL is how long the id of a removed container is remembered, so
// that a late event or a stale list cannot bring it back. Container ids
// are never reused.
const goneTTL = 10 * time.Minute

// maxLabelBases is how many label maps the containers of one controller
// share at most: one per template and part; a container whose labels are
// in none of them gets one of its own, which is as correct, if larger.
const maxLabelBases = 8

// replaceChunk is how many containers a relist applies per hold of the
// lock, so that a sync reading the cache never waits behind a whole list.
const replaceChunk = 512

// taskCache holds the containers that carry the ownership label, by
// controller. Tasks handed out are copies, each with a label map of its
// own: the cache keeps labels in maps that containers share (cachedtask.go).
//
// Every change the cache learns outside a list (the manager's own create,
// rename or delete, an event or its inspect, a destroy event) gets a sequence
// number. A list started at sequence number s knows nothing newer: it does
// not override a container changed after s, does not remove one created
// after s, and does not bring back one removed at all. So two lists, or a
// list and an event, can land in any order without hiding a death or a
// create.
type taskCache struct {
	mu    sync.Mutex
	tasks map[string]cachedTask          // container id -> task (cachedtask.go)
	byRC  map[string]map[string]struct{} // controller id -> container ids
	// bases are the label maps the containers of a controller share
	// (cachedLabels), newest first, at most maxLabelBases of them: a new
	// container's labels are looked for there
	bases  map[string][]map[string]string
	synced bool
	// versions changes each time a controller's containers do, by
	// controller id (none: it has none); gen is the last one given
	// (quiet.go).
	versions map[string]uint64
	gen      uint64

	seq     uint64
	listed  uint64               // sequence number the installed list started at
	touched map[string]uint64    // container id -> seq of its newest change
	gone    map[string]time.Time // container id -> when it was removed

	// pending holds the events of the containers the manager is creating,
	// by name, and early the names of the ids those events were of: held
	// until the create returns (creating, created, createDone).
	pending map[string]*pendingCreate
	early   map[string]string // container id -> name in pending
}

// pendingCreate is one create under way: the events that arrived for its
// container before the create returned, and, once it has, the id it
// returned, whose later events are no longer held.
type pendingCreate struct {
	events  []api.TaskEvent
	created string
}

func newTaskCache() *taskCache {
	return &taskCache{
		tasks:    make(map[string]cachedTask),
		byRC:     make(map[string]map[string]struct{}),
		bases:    make(map[string][]map[string]string),
		versions: make(map[string]uint64),
		touched:  make(map[string]uint64),
		gone:     make(map[string]time.Time),
		pending:  make(map[string]*pendingCreate),
		early:    make(map[string]string),
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
		out = append(out, c.tasks[id].task(id))
	}
	return out, true
}

// scan calls f with each container of a controller as the cache keeps
// it, by id, under the cache's lock and without a copy of the list: f must
// be quick and must not use the cache, and makes the api.Task (task) only
// of the containers it keeps, since each costs a label map. Before the
// cache has been filled, it calls f with none.
func (c *taskCache) scan(rcID string, f func(id string, t cachedTask)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.synced {
		return
	}
	for id := range c.byRC[rcID] {
		f(id, c.tasks[id])
	}
}

// startList returns the sequence number a list starting now must pass to
// replace.
func (c *taskCache) startList() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// replace installs a full list that was started at sequence number since,
// keeping what the cache learned after it started, and returns how the
// list differed from the cache: the controllers whose containers changed,
// and the containers. A list older than the one installed is dropped. It
// updates the cache in place, a chunk at a time, so an unchanged container
// costs a lookup, not a copy, and readers wait for a chunk, not for the
// list. Callers run one replace at a time.
func (c *taskCache) replace(listed []api.Task, since uint64, now time.Time) listDrift {
	c.mu.Lock()
	stale := c.synced && since < c.listed
	c.mu.Unlock()
	if stale {
		return listDrift{}
	}
	var drift listDrift
	changed := make(map[string]struct{})
	seen := make(map[string]struct{}, len(listed))
	for start := 0; start < len(listed); start += replaceChunk {
		c.mu.Lock()
		for _, t := range listed[start:min(start+replaceChunk, len(listed))] {
			c.applyListedLocked(t, since, seen, changed, &drift)
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
				t := c.tasks[id].task(id)
				drift.add(func() string { return driftGone(t) })
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
	drift.controllers = make([]string, 0, len(changed))
	for id := range changed {
		drift.controllers = append(drift.controllers, id)
	}
	return drift
}

// applyListedLocked installs one listed container unless the cache knows
// better.
func (c *taskCache) applyListedLocked(t api.Task, since uint64, seen, changed map[string]struct{}, drift *listDrift) {
	if _, ok := t.Labels[api.LabelController]; !ok {
		return
	}
	if _, removed := c.gone[t.ID]; removed {
		return
	}
	seen[t.ID] = struct{}{}
	ct, ok := c.tasks[t.ID]
	if ok {
		o := ct.unlabelled(t.ID)
		if c.touched[t.ID] > since || sameAsCached(o, ct.labels, t) {
			// the cache learned of a newer change than the list saw, or
			// nothing changed and the entry has the inspect's start and
			// finish times, which a list lacks
			return
		}
		keepKill(o, &t)
		o.Labels = ct.labels.labels()
		changed[o.Labels[api.LabelController]] = struct{}{}
		drift.add(func() string { return driftChanged(o, t) })
	} else if c.touched[t.ID] > since {
		return
	} else {
		drift.add(func() string { return driftListed(t) })
	}
	changed[t.Labels[api.LabelController]] = struct{}{}
	c.insertLocked(t)
}

// observe records a container as an inspect saw it: one whose event the
// cache could not apply, a dead one (inspectDead), one whose monitor
// window ended (windows.go), a name's holder. A container the manager
// removed is ignored. It reports whether anything changed; times a list
// lacked, and a newer check that it runs, are kept without counting as a
// change. A container that started again since the cache learned of its
// start (its start event not applied yet) has changed.
func (c *taskCache) observe(t api.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, removed := c.gone[t.ID]; removed {
		return false
	}
	if _, ok := t.Labels[api.LabelController]; !ok {
		return false
	}
	if ct, ok := c.tasks[t.ID]; ok {
		old := ct.unlabelled(t.ID)
		restarted := startedAgain(old, t)
		if sameAsCached(old, ct.labels, t) && !restarted {
			lacked := (old.StartedAt.IsZero() && !t.StartedAt.IsZero()) || (old.FinishedAt.IsZero() && !t.FinishedAt.IsZero())
			checked := t.CheckedAt.After(old.CheckedAt)
			if lacked || checked {
				// times a list lacked, and how long it has run: keep
				// them, so that the sync need not inspect it again
				if lacked {
					old.StartedAt, old.FinishedAt, old.ExitCode = t.StartedAt, t.FinishedAt, t.ExitCode
				}
				if checked {
					old.CheckedAt = t.CheckedAt
				}
				c.seq++
				c.touched[t.ID] = c.seq
				c.updateLocked(old)
			}
			return false
		}
		if t.State == api.StateCreated && old.State != api.StateCreated {
			// a container never goes back to created: this inspect was
			// made before a start the cache already knows of
			return false
		}
		keepKill(old, &t)
	}
	c.seq++
	c.touched[t.ID] = c.seq
	c.insertLocked(t)
	return true
}

// startedAgain reports whether t, an engine's answer of the container
// old is, started since old's start; a list knows no start, and tells
// nothing of it.
func startedAgain(old, t api.Task) bool {
	return !old.StartedAt.IsZero() && !t.StartedAt.IsZero() && !old.StartedAt.Equal(t.StartedAt)
}

// keepKill carries into t, an engine's answer (a list, an inspect) that
// replaces old, a kill the cache learned since old's start: only events
// tell a kill, so the death such an answer shows between a kill event and
// its die event is someone's doing (a node's delete, docker rm -f), not a
// crash.
func keepKill(old api.Task, t *api.Task) {
	if old.Killed && !startedAgain(old, *t) {
		t.Killed = true
	}
}

// created writes a container the manager has just created, then applies
// the events of it that arrived while the create was under way (creating).
// The create's own create and start events, which the create's result
// already tells, are skipped; a start after a die is not. It reports
// whether those events changed the container, and whether one of them
// could not be applied without an inspect. A container whose destroy
// event came already is not written.
func (c *taskCache) created(t api.Task) (changed, inspect bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var held []api.TaskEvent
	if p := c.pending[t.Name]; p != nil {
		p.created = t.ID
		rest := p.events[:0]
		for _, ev := range p.events {
			if ev.ID == t.ID {
				held = append(held, ev)
			} else {
				rest = append(rest, ev)
			}
		}
		p.events = rest
		delete(c.early, t.ID)
	}
	if _, removed := c.gone[t.ID]; removed {
		return false, false
	}
	died := false
	for _, ev := range held {
		switch ev.Action {
		case "create":
			continue // what the create returned tells it
		case "start":
			if !died {
				continue // the create's own start, which it returned after
			}
		case "die":
			died = true
		}
		next, ok := eventTask(t, ev)
		if !ok {
			inspect = true
			continue
		}
		changed = changed || !sameTask(t, next)
		t = next
	}
	c.seq++
	c.touched[t.ID] = c.seq
	c.insertLocked(t)
	return changed, inspect
}

// creating tells the cache that the manager is creating a container named
// name: its events are held until created and createDone.
func (c *taskCache) creating(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[name] = &pendingCreate{}
}

// createDone ends the create of name, after created when it succeeded,
// and returns the ids of containers of that name whose events arrived
// during it but that the create did not return (it failed after the
// engine made the container, and removing it failed too or has not been
// seen yet): nil in the usual case. Those need an inspect; one whose
// destroy event came already (destroy events are not held) does not.
func (c *taskCache) createDone(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[name]
	delete(c.pending, name)
	if p == nil {
		return nil
	}
	var unknown []string
	for _, ev := range p.events {
		if _, ok := c.early[ev.ID]; !ok {
			continue // seen already
		}
		delete(c.early, ev.ID)
		if _, removed := c.gone[ev.ID]; !removed {
			unknown = append(unknown, ev.ID)
		}
	}
	return unknown
}

// eventResult is what the cache made of an event.
type eventResult int

const (
	eventUnchanged eventResult = iota // nothing a sync looks at changed, or not ours
	eventChanged                      // the container changed
	eventHeld                         // held for a create under way
	eventInspect                      // the event cannot tell: inspect the container
)

// event applies an event of a container, other than destroy, from what it
// tells: a container the cache knows is updated (eventTask); one it does
// not know, or an event that does not tell enough, asks for an inspect;
// an event of a container the manager is creating is held until the
// create returns (created). A container the manager removed is left
// alone.
func (c *taskCache) event(ev api.TaskEvent) eventResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, removed := c.gone[ev.ID]; removed {
		return eventUnchanged
	}
	name, held := c.early[ev.ID]
	if p := c.pending[ev.Name]; !held && p != nil && p.created != ev.ID {
		// a create of that name is under way: unless the cache knows
		// the container under another name (an earlier holder of the
		// name, renamed since), this is the create's container
		if old, known := c.unlabelledLocked(ev.ID); !known || old.Name == ev.Name {
			name, held = ev.Name, true
		}
	}
	if held {
		c.early[ev.ID] = name
		p := c.pending[name]
		p.events = append(p.events, ev)
		return eventHeld
	}
	old, ok := c.unlabelledLocked(ev.ID) // an event changes no label
	switch {
	case !ok && ev.Action == "kill":
		return eventUnchanged // its die follows, and tells what an inspect would
	case !ok:
		// another manager's container, or one made by hand, or one
		// the list has not seen yet: its JoinedTo, Created, image and
		// state take an inspect
		return eventInspect
	}
	t, ok := eventTask(old, ev)
	switch {
	case !ok:
		return eventInspect
	case sameState(old, t) && old.StartedAt.Equal(t.StartedAt) && old.FinishedAt.Equal(t.FinishedAt) && old.Killed == t.Killed:
		return eventUnchanged
	}
	c.seq++
	c.touched[t.ID] = c.seq
	c.updateLocked(t)
	if sameState(old, t) {
		return eventUnchanged // new times, or a kill: nothing to sync until the die
	}
	return eventChanged
}

// eventTask is t after the event ev, from what the event tells, or false
// when it does not tell enough and the container needs an inspect:
//   - start: running since the event's time; a container with a health
//     check starts over at "starting". One whose health the cache does not
//     know (none: no check, or the cache learned it from a created
//     container or a list) needs an inspect, as does a start without a
//     time (crash-loop counting needs StartedAt). A start of a container
//     the cache has running already is one that the inspect or list the
//     cache had it from saw: events come in order, and a container does
//     not start twice without a die in between.
//   - die: exited with the event's exit code, finished at its time. When
//     the cache does not know when it started (it came from a list),
//     FinishedAt stays zero, so that the sync inspects it for both times
//     (inspectDead) before the crash count reads them.
//   - health_status: the event's health; one the event does not name
//     needs an inspect.
//   - pause, unpause: paused, running.
//   - rename: the event's name.
//   - restart: the engine restarted it and what it went through depends
//     on the engine's version: inspect.
//   - kill: the die that follows is someone's doing, not a crash
//     (Killed, until the next start).
//   - create of a known container, stop, oom (a die follows), exec and
//     the rest change nothing a sync looks at.
func eventTask(t api.Task, ev api.TaskEvent) (api.Task, bool) {
	switch ev.Action {
	case "start":
		if t.State == api.StateRunning {
			return t, true
		}
		if ev.Time.IsZero() || t.Health == api.HealthNone {
			return t, false
		}
		t.State = api.StateRunning
		t.StartedAt = ev.Time
		t.Health = api.HealthStarting
		t.Killed = false
	case "kill":
		t.Killed = t.Active()
	case "die":
		t.State = api.StateExited
		t.ExitCode = ev.ExitCode
		t.FinishedAt = time.Time{}
		if !t.StartedAt.IsZero() && !ev.Time.IsZero() {
			t.FinishedAt = ev.Time
		}
	case "health_status":
		if ev.Health == api.HealthNone {
			return t, false
		}
		t.Health = ev.Health
	case "pause":
		t.State = api.StatePaused
	case "unpause":
		t.State = api.StateRunning
	case "rename":
		if ev.Name == "" {
			return t, false
		}
		t.Name = ev.Name
	case "restart":
		return t, false
	}
	return t, true
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
	t.name = name
	c.tasks[id] = t
	c.changedLocked(t.labels.controller())
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
	rc := t.Labels[api.LabelController]
	labels, isNew := splitLabels(t.Labels, c.bases[rc])
	if isNew {
		bases := c.bases[rc]
		c.bases[rc] = append([]map[string]string{labels.base}, bases[:min(len(bases), maxLabelBases-1)]...)
	}
	c.tasks[t.ID] = cacheForm(t, labels)
	if c.byRC[rc] == nil {
		c.byRC[rc] = make(map[string]struct{})
	}
	c.byRC[rc][t.ID] = struct{}{}
	c.changedLocked(rc)
}

// updateLocked writes t over the container of its id that the cache
// holds, which has t's labels: an event, or the times an inspect adds,
// change none.
func (c *taskCache) updateLocked(t api.Task) {
	labels := c.tasks[t.ID].labels
	c.tasks[t.ID] = cacheForm(t, labels)
	c.changedLocked(labels.controller())
}

// changedLocked gives controller rc a new version.
func (c *taskCache) changedLocked(rc string) {
	c.gen++
	c.versions[rc] = c.gen
}

// versionOf is the version of a controller's containers: it differs from
// an earlier one when they changed since (0 while it has none).
func (c *taskCache) versionOf(rcID string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versions[rcID]
}

func (c *taskCache) removeLocked(id string) {
	t, ok := c.tasks[id]
	if !ok {
		return
	}
	delete(c.tasks, id)
	rc := t.labels.controller()
	delete(c.byRC[rc], id)
	c.changedLocked(rc)
	if len(c.byRC[rc]) == 0 {
		delete(c.byRC, rc)
		delete(c.versions, rc)
		delete(c.bases, rc)
	}
}

// sameTask compares what a sync looks at: a list and an inspect of the same
// unchanged container agree on these. The health of a container that does
// not run is not looked at (a list does not report it, and the cache keeps
// the last one a die left, so that a start knows there is a check).
func sameTask(a, b api.Task) bool {
	return sameState(a, b) && a.Labels[api.LabelController] == b.Labels[api.LabelController]
}

// sameAsCached is sameTask of a cached container, given without its
// labels (unlabelled, which makes no map) and with the labels the cache
// keeps, and t.
func sameAsCached(old api.Task, labels cachedLabels, t api.Task) bool {
	return sameState(old, t) && labels.controller() == t.Labels[api.LabelController]
}

// sameState is sameTask but for the controller label.
func sameState(a, b api.Task) bool {
	return a.ID == b.ID && a.Name == b.Name && a.State == b.State && a.ImageID == b.ImageID &&
		(a.Health == b.Health || !a.Active() && !b.Active())
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

// unlabelledLocked returns the container of id without its labels, which
// cost a map (an event changes none), or false when the cache does not
// hold it.
func (c *taskCache) unlabelledLocked(id string) (api.Task, bool) {
	t, ok := c.tasks[id]
	if !ok {
		return api.Task{}, false
	}
	return t.unlabelled(id), true
}
