package decide

import (
	"slices"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// Assignment is what the leader wrote for one slot: the node that runs it
// and the template revision it runs there.
type Assignment struct {
	Node string
	// Revision is the spec ModRevision whose template the slot runs, and
	// Hash that template's hash.
	Revision int64
	Hash     string
	// OnDelete: the node keeps a running container of another template
	// and uses this one only for a replacement.
	OnDelete bool
	// StartFirst: the node starts the successor before it stops the old
	// container (a surge step).
	StartFirst bool
	// StartedFirst counts the containers that earlier start-first steps
	// of the slot on this node may still run besides this one's: a rewrite
	// never forgets a step in flight.
	StartedFirst int
	// ModRev is the assignment key's ModRevision, which a change compares
	// (0: no key).
	ModRev int64
	// Replace is the id of the container the node is to replace, with
	// its whole task, because it is unhealthy (health.go); the leader
	// leaves it once done: a container of another id is not touched.
	Replace string
}

// same reports whether a and b say the same thing (ModRev and the
// StartedFirst count aside, which follows from the rest).
func (a Assignment) same(b Assignment) bool {
	a.ModRev, b.ModRev = 0, 0
	a.StartedFirst, b.StartedFirst = 0, 0
	return a == b
}

// Container is one container of the controller as a node reported it.
//
// Its bools come last, together: the leader holds one per container
// reported (100,000 at 10,000 controllers × 10), and a bool between two
// wider fields takes eight bytes.
type Container struct {
	Node      string
	Hash      string
	StartedAt time.Time
	Slot      int
	// ID is the container's (its task's first container's) id.
	ID string
	// Named: it holds its slot's name (<id>-<slot>); an outdated one
	// renamed out for a successor started first does not.
	Named bool
	// Live: running, paused, restarting, or created and about to start.
	Live bool
	// Running: Docker reports it running. What surely runs is counted
	// from these; a created one may take long to start, or never does.
	Running bool
	// Ready: running and, where it has a health check, healthy.
	Ready bool
	// Monitored: its node's engine said it runs, since StartedAt, at least
	// the controller's AvailableAfter after it started (api.ReportedTask).
	Monitored bool
	// Unhealthy: Docker reports a container of the task unhealthy.
	Unhealthy bool
}

// Resources are memory in bytes and CPU in Docker shares (1024 a CPU).
type Resources struct {
	Memory int64
	CPU    int64
}

// Node is a node as placement sees it, with what the other controllers'
// slots already use there.
type Node struct {
	Name   string
	Labels map[string]string
	// Alive: registered, its lease lives. A node that is not keeps its
	// slots until it has been gone for the grace period.
	Alive     bool
	GoneSince time.Time
	// Capacity is what the node registered (less what it keeps for
	// itself); zero fields are not enforced.
	Capacity Resources
	// Used is what the other controllers' assigned slots reserve.
	Used Resources
	// Slots counts the other controllers' assigned slots.
	Slots int
	// Ports are the host ports the other controllers publish, as "80/TCP".
	Ports map[string]bool
	// Availability is the node's config's ("" is active): a paused node
	// takes no new slot, and a drained one's slots move off it.
	Availability api.NodeAvailability
}

// open reports whether n takes new slots: neither paused nor drained.
func (n *Node) open() bool {
	return n.Availability == "" || n.Availability == api.NodeActive
}

// Controller is what the decision needs of one controller's spec.
type Controller struct {
	ID string
	// Gone: the spec was deleted; every assignment goes.
	Gone bool
	// Frozen: the spec cannot be acted on (invalid); the assignments stay
	// as they are, so that a bad edit moves no container.
	Frozen   bool
	Replicas int
	// Revision is the spec's ModRevision and Hash its template's hash.
	Revision int64
	Hash     string
	Selector map[string]string
	// Ports are the host ports a task publishes; Reserve what it reserves.
	Ports   []string
	Reserve Resources
	// OnDelete is the OnDelete strategy; otherwise RollingUpdate.
	OnDelete bool
	Paused   bool
	// Surge and Unavailable are maxSurge and maxUnavailable resolved
	// against Replicas.
	Surge, Unavailable int
	// AvailableAfter is how long a container must have run ready before
	// it counts for the next step: max(minReadySeconds, monitorSeconds).
	AvailableAfter time.Duration
	// MinReady is minReadySeconds: a container ready for that long is
	// available as the status counts it, and taking it down costs
	// availability even before it counts for the next step.
	MinReady time.Duration
	// ReplaceUnhealthy: the template's health check says onUnhealthy:
	// replace (health.go).
	ReplaceUnhealthy bool
	// Number is the template's number in the history (0: unknown).
	Number int64
	// Rollback: a failed rollout rolls back (updateStrategy.failureAction);
	// MaxFailureRatio is updateStrategy.maxFailureRatio, and
	// ProgressDeadline the progress deadline (rollback.go).
	Rollback         bool
	MaxFailureRatio  float64
	ProgressDeadline time.Duration
}

// Report is what one node last reported of the controller, besides its
// containers.
type Report struct {
	// Slots are the slots the node runs as assigned to it. A node writes
	// a slot here before it creates a container of it, and drops it only
	// once no container of it is left, so that a node's report always
	// covers what it may run, stale or not.
	Slots SlotSet
	// StartedFirst are the slots of which the node may run two
	// containers: a successor started next to an outdated one. It writes
	// a slot here as it writes one into Slots, before the create.
	StartedFirst SlotSet
}

// SlotSet is a set of slots, sorted: the leader keeps two per report it
// holds, 20,000 at 10,000 controllers, where a map of ten slots took 288
// bytes and a slice takes 80.
type SlotSet []int

// NewSlotSet is the set of slots, given in any order, repeats allowed.
func NewSlotSet(slots ...int) SlotSet {
	s := slices.Clone(slots)
	slices.Sort(s)
	return slices.Clip(slices.Compact(s))
}

// Has reports whether slot is in s.
func (s SlotSet) Has(slot int) bool {
	_, ok := slices.BinarySearch(s, slot)
	return ok
}

// Release is a slot the leader took off Node at etcd revision Rev. A node
// writes a slot into its report, in a transaction that checks the slot is
// still its own, before it creates a container of it; so once the reports
// are as of Rev, they show every container of the slot the node may run.
// Until then the slot is held, counting Live containers on Node: what the
// assignment taken off it may have started (ReleaseOf).
type Release struct {
	Node string
	Rev  int64
	Live int
}

// ReleaseOf is the release of a, taken off its node at rev: a start-first
// step in flight, and those carried in StartedFirst, may each have
// started a container besides the slot's own.
func ReleaseOf(a Assignment, rev int64) Release {
	return Release{Node: a.Node, Rev: rev, Live: a.inFlight()}
}

// inFlight is how many containers of its slot a's node may run for it
// until it reports the slot settled.
func (a Assignment) inFlight() int {
	n := 1 + a.StartedFirst
	if a.StartFirst {
		n++
	}
	return n
}

// Input is everything one decision is made from.
type Input struct {
	Controller Controller
	// Assigned are the controller's assignments by slot.
	Assigned map[int]Assignment
	// Containers are every node's last report of the controller, and
	// Reports the rest of those reports, by node.
	Containers []Container
	Reports    map[string]Report
	// ReportsRevision is the etcd revision the reports are as of.
	ReportsRevision int64
	// Released are the slots this leader took off a node, by slot.
	Released map[int]Release
	// Blocked are, per slot, the nodes on which a container outside the
	// controller's set holds the slot's name.
	Blocked map[int]map[string]bool
	// Nodes in name order.
	Nodes []Node
	Now   time.Time
	// Grace is how long a node may be gone before its slots move.
	Grace time.Duration
	// Health is the leader's record of the slots' ill health, by slot
	// (health.go).
	Health map[int]Health
	// Rollout is the leader's record of the controller's rollouts, kept
	// in the status; Watched the new containers it watches through their
	// monitor window, by id, kept in its memory; DeadlineExceeded: a node
	// reports the spec's rollout past its progress deadline
	// (rollback.go).
	Rollout          api.RolloutRecord
	Watched          map[string]Watched
	DeadlineExceeded bool
}

// Change is one assignment write: slot gets New, or loses its assignment
// when New is nil. Old is what it replaces (ModRev 0: nothing).
type Change struct {
	Slot int
	Old  Assignment
	New  *Assignment
}

// Result is the decision.
type Result struct {
	Changes []Change
	// Unschedulable are the slots no node can take, and Reason why.
	Unschedulable []int
	Reason        string
	// RecheckAfter is when to decide again although nothing is reported:
	// a container becomes available, or a gone node's grace ends. 0: no
	// need.
	RecheckAfter time.Duration
	// Moves are the slots this decision took off a live node to place
	// elsewhere, each with why.
	Moves []Move
	// Steps counts the rollout steps (slots given the new template in
	// place of an older one).
	Steps int
	// Unhealthy are the slots whose task is reported unhealthy, of a
	// controller that replaces them; Replaced those this decision has
	// replaced; Health the record as the decision leaves it, for the
	// leader to keep (health.go).
	Unhealthy []int
	Replaced  []Replacement
	Health    map[int]Health
	// Rollout and Watched are the records as the decision leaves them,
	// for the leader to keep, and Rollback what this decision did of a
	// rollback ("": nothing; rollback.go).
	Rollout  api.RolloutRecord
	Watched  map[string]Watched
	Rollback RollbackStep
}

// Move is a slot taken off a live node that can no longer run it, the
// first phase of its move elsewhere.
type Move struct {
	Slot int
	Node string
	// Reason is MoveDrain, MoveLabels, MoveSelector or MoveBlocked.
	Reason string
}

// The reasons of a move.
const (
	// MoveDrain: the node is drained.
	MoveDrain = "drain"
	// MoveLabels: the node's labels no longer match the selector (its
	// config's labels changed).
	MoveLabels = "labels"
	// MoveSelector: the selector no longer matches the node's labels.
	MoveSelector = "selector"
	// MoveBlocked: a container outside the set holds the slot's name there.
	MoveBlocked = "blocked"
)

func (r *Result) recheck(after time.Duration) {
	if after > 0 && (r.RecheckAfter == 0 || after < r.RecheckAfter) {
		r.RecheckAfter = after
	}
}
