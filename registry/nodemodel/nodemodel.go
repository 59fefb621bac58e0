package nodemodel

// This file is the model: a node runs exactly the slots the leader
// assigned to it, each with its assigned template, and no more. It
// creates a slot's container when there is none, replaces one of another
// template (stop first; or start first when the assignment says so, the
// old one renamed out of the slot's name until its successor is
// available, or until the slot is to stop first again; a successor
// replaced before it took over stops first; under OnDelete a
// running one is kept), replaces the one the leader names unhealthy, and
// removes its containers of every slot not assigned to it. Removed
// containers stay the node's, and in its report, until its engine shows
// them gone: the model only says what goes.

import (
	"slices"
	"sort"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// Container is one of the controller's live containers on the node:
// running, paused, restarting, or created and about to start.
type Container struct {
	// Name is its name: its slot's (<id>-<slot>) while it holds the slot,
	// another once renamed out for a successor started first.
	Name string
	ID   string
	// Slot is its slot label; one not assigned to the node (none, or not
	// a number) is removed.
	Slot int
	// Hash is the template hash it runs.
	Hash string
	// Ready: running and, where it has a health check, healthy.
	Ready bool
	// Since is when it started (when it was created, where the engine did
	// not say).
	Since time.Time
	// Monitored: the node's engine said it runs, since Since, at least
	// Window after Since (with no Window, that it runs): it ran through
	// its monitor window by the engine's word, not only the node's clock.
	Monitored bool
}

// Input is what the model decides from.
type Input struct {
	// Controller is the controller's id.
	Controller string
	// Assigned are the slots the leader assigned to the node.
	Assigned registry.SlotAssignments
	// Hash is the spec's template hash: what a slot assigned before
	// assignments carried a template runs once created.
	Hash string
	// Containers are the node's live containers of the controller, and
	// Removing those its engine is removing already: not the node's to
	// touch, but one that holds its slot's name still keeps it.
	Containers []Container
	Removing   []Container
	// Blocked are the slots whose names containers outside the set hold
	// on the node: it cannot create them.
	Blocked []int
	// Burst caps each of the node's removals, replacements and creates
	// of one pass; what it leaves waits for the next.
	Burst int
	// Window is how long a container must have run, ready, to count as
	// available for a rollout (max(minReadySeconds, monitorSeconds)), and
	// Now the time.
	Window time.Duration
	Now    time.Time
}

// Result is what the node does now. The containers are indexes into
// Input.Containers.
type Result struct {
	// Remove are the containers of slots not assigned to the node that go
	// now, in name order; Unassigned counts every container of such a
	// slot, the ones the burst leaves too.
	Remove     []int
	Unassigned int
	// Replace are the slots whose container is replaced, lowest first.
	Replace []Replacement
	// Retire are the outdated containers renamed out for a successor
	// that go now: the successor is available, or the slot is to stop
	// first again.
	Retire []int
	// Create are the slots whose container the node creates, lowest
	// first: the replaced ones and those with none.
	Create []int
	// More says the burst left removals or replacements for the next
	// pass, and MoreCreates that it left creates.
	More, MoreCreates bool
	// RecheckAfter is when to look again though nothing changes: a
	// successor becomes available, or a name a removal holds is free.
	RecheckAfter time.Duration
}

// Replacement is one container replaced.
type Replacement struct {
	Container int
	Slot      int
	// Hash is the template its successor runs.
	Hash string
	// Unhealthy: the leader named it unhealthy (Assignment.Replace), and
	// it is stopped first whatever its template. Otherwise it is of
	// another template: stopped first, or renamed out of its slot's name
	// when StartFirst.
	Unhealthy  bool
	StartFirst bool
}

// HashOf is the template hash a slot assigned a runs: the assigned one,
// or the spec's (specHash) for an assignment written before assignments
// carried one.
func HashOf(a api.Assignment, specHash string) string {
	if a.TemplateHash != "" {
		return a.TemplateHash
	}
	return specHash
}

// Plan says what the node does with its assignments now.
func Plan(in Input) Result {
	var r Result
	removeUnassigned(in, &r)
	// by slot, the container holding its name; the containers renamed out
	// for a successor, and their slots
	named := make(map[int]int, len(in.Containers))
	var renamed []int
	out := map[int]bool{}
	for i, c := range in.Containers {
		if api.IsTaskName(c.Name, in.Controller, c.Slot) {
			named[c.Slot] = i
		} else {
			renamed = append(renamed, i)
			out[c.Slot] = true
		}
	}
	held := make(map[int]bool, len(in.Removing))
	for _, c := range in.Removing {
		if api.IsTaskName(c.Name, in.Controller, c.Slot) {
			held[c.Slot] = true
		}
	}
	var creates []int
	steps := 0
	for slot, sa := range in.Assigned.All() {
		a := sa.Assignment
		hash := HashOf(a, in.Hash)
		i, ok := named[slot]
		if !ok {
			switch {
			case held[slot]:
				r.recheck(time.Second) // its removal's end queues the node too; this is a backstop
			case !slices.Contains(in.Blocked, slot):
				creates = append(creates, slot)
			}
			continue
		}
		c := in.Containers[i]
		rep := Replacement{Container: i, Slot: slot, Hash: hash}
		switch {
		case a.Replace != "" && a.Replace == c.ID:
			// unhealthy: the leader ordered its task replaced
			// (registry/decide/health.go), within its bounds
			rep.Unhealthy = true
		case c.Hash == hash || a.OnDelete || a.TemplateHash == "":
			// the current template; or kept under OnDelete; or assigned
			// before assignments carried a template, so that the leader
			// rolls it within the bounds rather than this node at once
			continue
		default:
			// started first, unless an old container of the slot is
			// renamed out already: then the one holding the name is a
			// successor that never took over, and it stops first, so that
			// a slot runs at most two containers (the old one serving and
			// one successor), as the leader counts it
			rep.StartFirst = a.StartFirst && !out[slot]
		}
		if steps == in.Burst {
			r.More = true
			continue
		}
		steps++
		r.Replace = append(r.Replace, rep)
		creates = append(creates, slot)
	}
	retire(in, &r, named, renamed)
	n := min(len(creates), in.Burst)
	r.Create, r.MoreCreates = creates[:n], n < len(creates)
	return r
}

// removeUnassigned removes the containers whose slot is not the node's,
// within the burst limit. They stay the node's, and in its report, until
// its engine has removed them: a slot whose container still runs here is
// not free for another node, however many the burst leaves for the next
// pass.
func removeUnassigned(in Input, r *Result) {
	for i, c := range in.Containers {
		if _, ok := in.Assigned.Get(c.Slot); !ok {
			r.Remove = append(r.Remove, i)
		}
	}
	sort.Slice(r.Remove, func(i, j int) bool { return in.Containers[r.Remove[i]].Name < in.Containers[r.Remove[j]].Name })
	r.Unassigned = len(r.Remove)
	if len(r.Remove) > in.Burst {
		r.Remove, r.More = r.Remove[:in.Burst], true
	}
}

// retire removes an old container renamed out for its successor once
// the successor is available, or at once when the slot is to stop first
// now (its template changed again): a slot that stops first has one
// container at a time.
func retire(in Input, r *Result, named map[int]int, renamed []int) {
	for _, i := range renamed {
		slot := in.Containers[i].Slot
		a, ok := in.Assigned.Get(slot)
		if !ok {
			continue // removeUnassigned's
		}
		j, ok := named[slot]
		var s Container
		if ok {
			s = in.Containers[j]
		}
		switch {
		case !a.StartFirst:
			r.Retire = append(r.Retire, i)
		case ok && s.Hash == HashOf(a.Assignment, in.Hash) && s.Ready && in.Now.Sub(s.Since) >= in.Window && s.Monitored:
			r.Retire = append(r.Retire, i)
		case ok && s.Ready:
			// at the window's end the node asks its engine, then
			// looks again (registry/agent, windows.go)
			r.recheck(in.Window - in.Now.Sub(s.Since))
		}
	}
}

func (r *Result) recheck(after time.Duration) {
	r.RecheckAfter = registry.Sooner(r.RecheckAfter, after)
}
