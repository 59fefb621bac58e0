package agent

// This file decides a controller's next step. plan is a pure function: from
// the spec, the controller's containers, its record and the time, it
// returns the actions (create these slots from this template, rename or
// delete these containers, look again after a delay) and the record as the
// plan leaves it. It does no I/O, takes no lock and reads no clock; apply
// (apply.go) carries the actions out, and settle (settle.go, pure too)
// turns what apply did into the node's report. Which slots exist and
// which template each runs is the leader's (package decide); the node
// runs its assigned slots (nodeplan.go).

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/nodemodel"
)

// planInput is everything plan decides from.
type planInput struct {
	id string
	// spec is the newest valid spec; nil when the controller is gone or
	// its spec cannot be acted on (invalid is then set).
	spec    *api.ReplicationController
	invalid error
	// undecodable says the spec is not even JSON of the right shape.
	undecodable    bool
	revision       int64 // the spec's ModRevision
	createRevision int64 // the spec's CreateRevision
	// hash is the spec's template hash.
	hash string
	// tasks are the cached containers labelled with the controller's id,
	// whoever made them; dead ones have been inspected. inits are its
	// init containers, set apart (initcontainers.go).
	tasks      []api.Task
	inits      []api.Task
	state      controllerState
	now        time.Time
	registryID string
	burst      int
	// assigned are the slots the leader assigned to this node: the node
	// runs those, each with its assigned template, and removes its
	// containers of any other.
	assigned registry.SlotAssignments
	// templates are the templates of the assigned revisions, by hash; one
	// missing (its history record is gone) cannot be created.
	templates map[string]*api.TaskTemplate
}

// wants reports whether slot is assigned to this node.
func (in *planInput) wants(slot int) bool {
	_, ok := in.assigned.Get(slot)
	return ok
}

// hashOf is the template hash slot runs: the assigned one, or the spec's
// for an assignment written before assignments carried one.
func (in *planInput) hashOf(slot int) string {
	a, _ := in.assigned.Get(slot)
	return nodemodel.HashOf(a.Assignment, in.hash)
}

// imageNeed is one image a template runs, and its pull policy.
type imageNeed struct {
	image, policy string
}

// imagesOf returns the images of a template's containers, each once; an
// image two containers name with different policies takes the stronger
// (Always over IfNotPresent over Never).
func imagesOf(tmpl *api.TaskTemplate) []imageNeed {
	rank := map[string]int{api.PullNever: 0, api.PullIfNotPresent: 1, api.PullAlways: 2}
	var out []imageNeed
	for i := range tmpl.DesiredState.Manifest.Containers {
		c := &tmpl.DesiredState.Manifest.Containers[i]
		need := imageNeed{image: c.Image, policy: c.PullPolicy()}
		if j := slices.IndexFunc(out, func(n imageNeed) bool { return n.image == need.image }); j >= 0 {
			if rank[need.policy] > rank[out[j].policy] {
				out[j].policy = need.policy
			}
			continue
		}
		out = append(out, need)
	}
	return out
}

// decision is what plan decided.
type decision struct {
	// creates are the tasks to make, lowest slot first.
	creates []taskCreate
	// images are the images of the creates' template, each with its pull
	// policy: apply makes sure the engine has them before it creates.
	images []imageNeed
	// proven says the template's last creates all succeeded: its images
	// with a policy other than Always are on the engine, unasked.
	proven bool
	// hash is the template hash of the creates.
	hash string
	// slowStart sends the creates in batches of 1, 2, 4, ...: the last
	// creates of this controller failed.
	slowStart bool
	// more says the burst limit left creates or deletes for the next sync.
	more bool

	renames []rename
	deletes []api.Task
	// unhealthy are the tasks of deletes replaced because they are
	// unhealthy; apply records an event with each one's last health check
	// output.
	unhealthy []api.Task
	// groups are the first containers of tasks of several containers, and
	// orphans the parts whose first container is gone (taskgroup.go); the
	// sync sets them from its grouping.
	groups  map[string]bool
	orphans []api.Task

	// active are the counted containers; the status counts those apply does
	// not delete, plus those it creates.
	active []api.Task
	// failure is the ReplicaFailure known before apply (a slot conflict).
	failure *api.Condition
	// blocked are the slots whose names containers outside the set hold.
	blocked []int
	// keepFailure leaves the last ReplicaFailure in place: creates wait out
	// a backoff, so the failure has not gone away.
	keepFailure bool
	// gone: the controller no longer exists; its record and status go with
	// its last container.
	gone bool
	// stale: the containers belong to an earlier spec of the same id; the
	// status is left as it is until they are gone.
	stale bool

	events       []note
	requeueAfter time.Duration
	state        controllerState
	// rolloutSteps counts the outdated containers this plan replaces.
	rolloutSteps int
	// rolled says the plan moves a rollout (a step, or an outdated
	// container removed after its successor): the next step may be due as
	// soon as this one is done.
	rolled bool
}

// rename moves a container out of its slot's name: a dead one kept for
// inspection, or an outdated one whose successor starts first.
type rename struct {
	task api.Task
	name string
	// dead: the container is dead and kept for inspection; if the rename
	// fails it is deleted instead, to free the slot. A live one (renamed
	// out for a successor started first) is never deleted for that.
	dead bool
}

// note is an event to record for people.
type note struct {
	typ, reason, message string
}

func (d *decision) requeue(after time.Duration) {
	d.requeueAfter = registry.Sooner(d.requeueAfter, after)
}

func (d *decision) event(typ, reason, format string, args ...any) {
	d.events = append(d.events, note{typ: typ, reason: reason, message: fmt.Sprintf(format, args...)})
}

// pendingGrace is how long a container may stay created but not started
// before it counts as abandoned: a create and its start are two calls, and
// another manager (or this one, before a crash) may be between them.
const pendingGrace = 30 * time.Second

// conflictTTL is how long a slot stays blocked by a container outside the
// set that only a create's conflict revealed (one without our labels is not
// in the cache, so nothing says when it goes). After it, the slot is tried
// again when it is needed.
const conflictTTL = 5 * time.Minute

// plan decides the next step of one controller.
func plan(in planInput) decision {
	d := decision{state: in.state}
	switch {
	case in.invalid != nil:
		planInvalid(in, &d)
	case in.spec == nil:
		planGone(in, &d)
	case planStale(in, &d):
	default:
		planReplicas(in, &d)
	}
	return d
}

// planInvalid touches no container: it reports why, once per revision.
func planInvalid(in planInput, d *decision) {
	last := in.state.status
	if last == nil || last.ObservedRevision != in.revision || last.FindCondition(api.ConditionInvalidSpec) == nil {
		d.event(api.EventWarning, "InvalidSpec", "%s", in.invalid.Error())
	}
}

// planGone removes every container of a deleted controller, a burst at a
// time. The spec, and with it the selector, is gone: ownership is the
// registry and controller labels alone.
func planGone(in planInput, d *decision) {
	d.gone = true
	owned := ownedByLabel(in)
	if len(owned) == 0 {
		return
	}
	n := min(len(owned), in.burst)
	d.deletes = owned[:n]
	d.more = n < len(owned)
	d.event(api.EventNormal, "Deleting", "controller deleted: removing %d container(s)", len(owned))
}

// planStale reports whether the containers on the host belong to an
// earlier spec of the same id (deleted, then created again before a sync
// saw the delete, or while the manager was down), and if so plans their
// removal first, as the delete's own sync would have done.
func planStale(in planInput, d *decision) bool {
	inc := in.state.incarnation
	if inc == 0 {
		// first look since start: a status older than the spec itself
		// describes an earlier spec of this id
		if last := in.state.status; last != nil && last.ObservedRevision > 0 && last.ObservedRevision < in.createRevision {
			inc = -1
		} else {
			inc = in.createRevision
		}
	}
	d.state.incarnation = inc
	if inc == in.createRevision {
		return false
	}
	old := ownedByLabel(in)
	if len(old) == 0 {
		d.state.incarnation = in.createRevision
		return false
	}
	d.stale = true
	n := min(len(old), in.burst)
	d.deletes = old[:n]
	d.requeue(time.Millisecond) // then create the new spec's containers
	d.event(api.EventNormal, "Recreated", "spec created again: removing %d container(s) of the deleted spec first", len(old))
	return true
}

// ownedByLabel returns the containers the controller owns by its labels
// alone, in name order.
func ownedByLabel(in planInput) []api.Task {
	var out []api.Task
	for _, t := range slices.Concat(in.tasks, in.inits) {
		if claimOf(in.registryID, in.id, nil, t.Labels) == claimOwned {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// planReplicas is the diff of a valid spec on this node: sort the
// containers by ownership and state, handle the dead, then run exactly
// the assigned slots (nodeplan.go).
func planReplicas(in planInput, d *decision) {
	rc := in.spec
	var dead, removing []api.Task
	var blocked map[int]string // slots whose name a container outside the set holds
	block := func(slot int, holder string) {
		if blocked == nil {
			blocked = make(map[int]string)
		}
		blocked[slot] = holder
	}
	// the active tasks are filtered in place: in.tasks is the sync's own
	// copy of the cache's list, read only here from now on
	d.active = in.tasks[:0]
	for _, t := range in.tasks {
		switch claimOf(in.registryID, in.id, rc.DesiredState.ReplicasInSet, t.Labels) {
		case claimNone, claimOutsideSet:
			if holdsSlot(in.id, t) {
				block(slotOf(t), outsider(in, t))
			}
		case claimOwned:
			switch {
			case t.State == api.StateRemoving:
				// Docker is removing it already: not ours to touch, but
				// it may still hold its slot's name
				removing = append(removing, t)
			case t.Active() || pending(t, in.now):
				d.active = append(d.active, t)
			default:
				dead = append(dead, t)
			}
		}
	}
	if len(in.state.conflicts) > 0 {
		conflicts := make(map[int]slotConflict, len(in.state.conflicts))
		for slot, c := range in.state.conflicts {
			if in.now.Sub(c.seen) < conflictTTL {
				conflicts[slot] = c
				block(slot, c.holder)
			}
		}
		d.state.conflicts = conflicts
	}

	planDead(in, d, dead)
	planInits(in, d)
	if c := conflictCondition(in, blocked); c != nil {
		d.failure = c
	}
	for slot := range blocked {
		d.blocked = append(d.blocked, slot)
	}
	sort.Ints(d.blocked)
	planAssigned(in, d, removing)
}

// planDead counts the crashes among the dead containers, keeps the newest
// one that ran for inspection, renamed out of its slot, and removes the
// others. A container that never started (its creator died between create
// and start) has nothing to inspect: it goes. So does one that someone
// killed (docker kill, stop, rm -f): it is no crash, and a rename racing
// a docker rm -f can leave the engine holding the slot's name for a
// container that is gone.
func planDead(in planInput, d *decision, dead []api.Task) {
	if len(dead) == 0 {
		return
	}
	var crashes []crash
	d.state.crashes, crashes = d.state.crashes.observe(dead)
	for _, c := range crashes {
		d.event(api.EventWarning, "Crashed", "container %s exited with code %d after %s", c.name, c.exitCode, c.ranFor.Round(time.Millisecond))
	}
	var ran []api.Task
	for _, t := range dead {
		if t.State == api.StateCreated {
			d.deletes = append(d.deletes, t)
		} else {
			ran = append(ran, t)
		}
	}
	sort.Slice(ran, func(i, j int) bool { return newerDeath(ran[i], ran[j]) })
	if len(ran) == 0 {
		return
	}
	d.deletes = append(d.deletes, ran[1:]...)
	switch keep := ran[0]; {
	case keep.Killed:
		d.deletes = append(d.deletes, keep)
	case holdsSlot(in.id, keep):
		d.renames = append(d.renames, rename{task: keep, name: deadName(in.id, keep.ID), dead: true})
	}
}

// createWait is how long creates must still wait out the controller's
// create and init backoffs; 0 means go.
func createWait(d *decision, now time.Time) time.Duration {
	return max(d.state.createBackoff.wait(now), d.state.initBackoff.wait(now))
}

// planCreates creates the containers of slots, lowest first, each with
// its assigned template, within the create and init backoffs and each
// slot's crash backoff: slots are those the burst limit lets through, and
// more says it left others. A slot whose template this node cannot find
// is left out and reported.
func planCreates(in planInput, d *decision, slots []int, more bool) {
	if len(d.state.crashes) > 0 {
		slots = slices.DeleteFunc(slices.Clone(slots), func(slot int) bool {
			wait := d.state.crashes.wait(slot, in.now)
			d.requeue(wait) // the slot's next try, once its crash backoff is out
			return wait > 0
		})
	}
	if len(slots) == 0 {
		return
	}
	if wait := createWait(d, in.now); wait > 0 {
		d.keepFailure = d.state.createBackoff.failures > 0 || d.state.initBackoff.failures > 0
		d.requeue(wait)
		return
	}
	d.more = d.more || more // a step held by the burst wants more too
	if d.state.initBackoff.failures > 0 {
		// an init container failing: one probe, and the next once it
		// has run, or failed again
		slots, d.more = slots[:1], false
	}
	var missing []string
	d.creates = slices.Grow(d.creates, len(slots)) // a create is a large value
	for _, slot := range slots {
		hash := in.hashOf(slot)
		tmpl := in.templates[hash]
		if tmpl == nil {
			a, _ := in.assigned.Get(slot)
			missing = append(missing, fmt.Sprintf("slot %d (revision %d, template %s)", slot, a.Revision, hash))
			continue
		}
		if d.hash == "" {
			d.hash = hash
			d.proven = d.state.proven == hash
			d.images = imagesOf(tmpl)
		}
		d.creates = append(d.creates, newTaskCreate(in, tmpl, slot, taskLabels(in, tmpl, slot, hash)))
	}
	if len(missing) > 0 {
		d.failure = &api.Condition{Type: api.ConditionReplicaFailure, Reason: api.ReasonCreateFailed,
			Message: "no template for " + strings.Join(missing, ", ") + ": its history record is gone"}
		d.requeue(time.Minute)
	}
	d.slowStart = d.state.createBackoff.failures > 0
}

// taskLabels are a new container's labels: a copy of the template's, plus
// the contract's. The template itself is never changed.
func taskLabels(in planInput, tmpl *api.TaskTemplate, slot int, hash string) map[string]string {
	labels := make(map[string]string, len(tmpl.Labels)+4)
	maps.Copy(labels, tmpl.Labels)
	labels[api.LabelController] = in.id
	labels[api.LabelSlot] = strconv.Itoa(slot)
	labels[api.LabelTemplateHash] = hash
	labels[api.LabelRegistry] = in.registryID
	return labels
}

// pending reports whether t is between its create and its start: it holds
// its slot and counts as a replica, so that nobody creates a second one.
func pending(t api.Task, now time.Time) bool {
	return t.State == api.StateCreated && now.Sub(t.Created) < pendingGrace
}

// outsider says what a container outside the set that holds a slot name is.
func outsider(in planInput, t api.Task) string {
	if reg, ok := t.Labels[api.LabelRegistry]; ok && reg != in.registryID {
		return fmt.Sprintf("%s (%s), of another registry (%s)", t.Name, shortID(t.ID), reg)
	}
	return fmt.Sprintf("%s (%s), outside the selector", t.Name, shortID(t.ID))
}

// conflictCondition reports the slots of 1..replicas whose names
// containers outside the set hold; nil when there are none.
func conflictCondition(in planInput, blocked map[int]string) *api.Condition {
	id := in.id
	var slots []int
	for slot := range blocked {
		if slot <= in.spec.DesiredState.Replicas {
			slots = append(slots, slot)
		}
	}
	if len(slots) == 0 {
		return nil
	}
	sort.Ints(slots)
	holders := make([]string, len(slots))
	for i, slot := range slots {
		holders[i] = blocked[slot]
	}
	return &api.Condition{
		Type:   api.ConditionReplicaFailure,
		Reason: api.ReasonSlotConflict,
		Message: fmt.Sprintf("slot name(s) of %s held by container(s) outside its set, so its replicas use other slots: %s",
			id, strings.Join(holders, "; ")),
	}
}
