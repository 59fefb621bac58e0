package agent

// This file is what makes an Agent one node of several
// (docs/CONTRACT.md, Nodes): it follows the assignments, keeps the slots the
// leader gave this node and queues a controller when its share changes;
// and instead of the controller's status, which the leader writes, it
// writes the node's report on its share, under the node's lease.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// NodeOptions make a manager act as one node of several.
type NodeOptions struct {
	// Name is the node's name, as registered under /registry/nodes/.
	Name string
	// Lease is the node's session lease; its reports live under it.
	Lease clientv3.LeaseID
}

// nodeSlots are the slots assigned to this node, by controller: what the
// node runs, and all it runs.
type nodeSlots struct {
	name string
	mu   sync.Mutex
	// slots holds, per controller, the assignments naming this node. A
	// controller's value is never changed once in: Put and Del put a
	// changed copy in its place, so of hands it out as it is.
	slots map[string]registry.SlotAssignments
	// versions changes each time a controller's slots here do (none: it
	// has none); gen is the last one given (quiet.go).
	versions map[string]uint64
	gen      uint64
	// listed is closed once the first list of assignments is in.
	listed   chan struct{}
	isListed bool
	// changed is called with each controller whose share changed, and
	// rolled with one whose only change is the template of slots it runs
	// already (a rollout step): that waits behind new work, in the queue's
	// second lane.
	changed, rolled func(id string)
	store           *registry.Store
	warn            func(msg string, args ...any)
}

func newNodeSlots(store *registry.Store, name string, changed, rolled func(string), warn func(string, ...any)) *nodeSlots {
	return &nodeSlots{name: name, store: store, slots: map[string]registry.SlotAssignments{}, versions: map[string]uint64{}, listed: make(chan struct{}),
		changed: changed, rolled: rolled, warn: warn}
}

// of returns the slots assigned here to controller id, for reading only:
// a sync takes them every time, and a steady one copied them for nothing.
func (n *nodeSlots) of(id string) registry.SlotAssignments {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.slots[id]
}

// versionOf is the version of controller id's slots here: it differs
// from an earlier one when they changed since.
func (n *nodeSlots) versionOf(id string) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.versions[id]
}

// setLocked puts id's slots in place, a new version with them.
func (n *nodeSlots) setLocked(id string, slots registry.SlotAssignments) {
	n.gen++
	if slots.Len() == 0 {
		delete(n.slots, id)
		delete(n.versions, id)
		return
	}
	n.slots[id], n.versions[id] = slots, n.gen
}

// decode returns the assignment of key k when it names this node.
func (n *nodeSlots) decode(k registry.KV) (id string, slot int, a registry.SlotAssignment, mine bool) {
	id, slot, a, _, err := n.store.DecodeAssignment(k)
	if err != nil {
		n.warn("assignment does not decode; ignored", "key", k.Key, "err", err)
	}
	return id, slot, a, err == nil && a.Node == n.name
}

func (n *nodeSlots) Reset(keys []registry.KV, _ int64) {
	all := map[string]registry.SlotAssignments{} // fresh values, built in place
	for _, k := range keys {
		if id, slot, a, mine := n.decode(k); mine {
			slots := all[id]
			slots.Set(slot, a)
			all[id] = slots
		}
	}
	n.mu.Lock()
	var changed []string
	for id := range all {
		if !all[id].Equal(n.slots[id]) {
			changed = append(changed, id)
		}
	}
	for id := range n.slots {
		if _, ok := all[id]; !ok {
			changed = append(changed, id)
		}
	}
	for _, id := range changed {
		n.setLocked(id, all[id])
	}
	if !n.isListed {
		n.isListed = true
		close(n.listed)
	}
	n.mu.Unlock()
	for _, id := range changed {
		n.changed(id)
	}
}

func (n *nodeSlots) Put(k registry.KV) {
	id, slot, a, mine := n.decode(k)
	if id == "" {
		return
	}
	n.mu.Lock()
	old, had := n.slots[id].Get(slot)
	switch {
	case mine:
		n.setLocked(id, n.slots[id].With(slot, a))
	case had:
		n.dropLocked(id, slot)
	}
	n.mu.Unlock()
	switch {
	case mine && had && old.TemplateHash != a.TemplateHash:
		n.rolled(id)
	case mine || had:
		n.changed(id)
	}
}

func (n *nodeSlots) Del(key string, _ int64) {
	id, slot, ok := n.store.ParseAssignmentKey(key)
	if !ok {
		return
	}
	n.mu.Lock()
	_, had := n.slots[id].Get(slot)
	n.dropLocked(id, slot)
	n.mu.Unlock()
	if had {
		n.changed(id)
	}
}

func (n *nodeSlots) dropLocked(id string, slot int) {
	if _, ok := n.slots[id].Get(slot); !ok {
		return
	}
	n.setLocked(id, n.slots[id].Without(slot))
}

// nodeReport is the report of this node's share of a controller, from
// its status, its active tasks (their first containers, with the parts
// partsOf finds), the slots it runs and the controller's monitor window.
func nodeReport(node string, st api.ReplicationControllerStatus, active []api.Task, partsOf func(api.Task) []api.Task, blocked, slots []int, window time.Duration) *api.NodeReport {
	r := &api.NodeReport{Node: node, Status: st, Tasks: make([]api.ReportedTask, 0, len(active)), BlockedSlots: blocked, Slots: slots}
	for _, t := range active {
		r.Tasks = append(r.Tasks, reportedTask(t, partsOf(t), window))
	}
	slices.SortFunc(r.Tasks, func(a, b api.ReportedTask) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// reportedTask is a task as a report lists it: its first container t and
// its parts, monitored when the engine's word covers window (windows.go).
func reportedTask(t api.Task, parts []api.Task, window time.Duration) api.ReportedTask {
	slot := slotOf(t)
	if slot == noSlot {
		slot = 0
	}
	r := api.ReportedTask{
		Name: t.Name, ID: t.ID, Slot: slot, Image: t.Image, State: t.State, Health: t.Health,
		TemplateHash: t.Labels[api.LabelTemplateHash], Created: t.Created, StartedAt: t.StartedAt,
		Monitored: monitored(t, window), ImageID: t.ImageID, RepoDigest: t.RepoDigest,
	}
	for _, p := range parts {
		r.Parts = append(r.Parts, api.ReportedPart{Name: p.Name, ID: p.ID, Container: p.Labels[api.LabelContainer],
			Image: p.Image, State: p.State, Health: p.Health, ImageID: p.ImageID, RepoDigest: p.RepoDigest})
	}
	slices.SortFunc(r.Parts, func(a, b api.ReportedPart) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// runSlots are the slots a node reports as its own: those assigned to it
// and those it still has a container of, in order.
func runSlots(assigned registry.SlotAssignments, active []api.Task) []int {
	out := slices.Grow(assigned.Slots(), len(active))
	for _, t := range active {
		if slot := slotOf(t); slot != noSlot {
			out = append(out, slot)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// startedFirstSlots are the slots of which active, the running init
// containers of inits and a container of each slot in creating hold two
// or more, in order: a successor started next to an outdated container
// of its slot, or about to be.
func startedFirstSlots(active, inits []api.Task, creating []int) []int {
	slots := make([]int, 0, len(active)+len(inits)+len(creating))
	for _, t := range active {
		slots = append(slots, slotOf(t))
	}
	for _, t := range inits {
		if t.Active() {
			slots = append(slots, slotOf(t))
		}
	}
	slots = append(slots, creating...)
	slices.Sort(slots)
	var out []int
	for i := 1; i < len(slots); i++ {
		twice := slots[i] == slots[i-1] && slots[i] != noSlot
		if twice && (len(out) == 0 || out[len(out)-1] != slots[i]) {
			out = append(out, slots[i])
		}
	}
	return out
}

// samePulling reports whether two pulling slots are the same.
func samePulling(a, b api.PullingSlot) bool {
	return a.Slot == b.Slot && a.Image == b.Image && a.Since.Equal(b.Since)
}

// writeReport stores the node's report on a controller when it changed,
// or removes it once the node has nothing of the controller left: a node
// without a slot or a container of a controller does not report on it.
// The report's repo digests are asked of the engine first, once per new
// image; a failure to learn one leaves it out of the report, and is
// returned after the report is written.
func (rm *Agent) writeReport(ctx context.Context, record *controllerState, st api.ReplicationControllerStatus, active, inits []api.Task, blocked []int, pulling []api.PullingSlot, assigned registry.SlotAssignments) error {
	// a slot whose init container may run is a slot that may run
	live := active
	if len(inits) > 0 {
		live = slices.Concat(active, inits)
	}
	slots, twice := runSlots(assigned, live), startedFirstSlots(active, inits, nil)
	empty := len(slots) == 0 && st.FindCondition(api.ConditionReplicaFailure) == nil
	if empty && !record.reported {
		if record.status == nil || !api.SameStatus(*record.status, st) {
			record.status = &st // kept as it was when the same: the sync was calm
		}
		return nil
	}
	var digestErr error
	if !empty {
		digestErr = rm.resolveDigests(ctx, st.ID)
	}
	if err := rm.putReport(ctx, record, st, active, blocked, pulling, slots, twice, empty); err != nil {
		return errors.Join(err, digestErr)
	}
	return digestErr
}

// putReport writes the report of writeReport, or deletes it when empty.
func (rm *Agent) putReport(ctx context.Context, record *controllerState, st api.ReplicationControllerStatus, active []api.Task, blocked []int, pulling []api.PullingSlot, slots, twice []int, empty bool) error {
	node := rm.opts.Node
	active = rm.digests.fill(active)
	partsOf := rm.digests.fillParts(rm.partsIndex(st.ID))
	if prev := record.status; record.reported && !empty && prev != nil && api.SameStatus(*prev, st) &&
		slices.Equal(record.reportedBlocked, blocked) && slices.Equal(record.reportedSlots, slots) && slices.Equal(record.reportedStartedFirst, twice) &&
		record.reportedDigest == activeDigest(active, partsOf, record.validated.window) &&
		slices.EqualFunc(record.reportedPulling, pulling, samePulling) {
		return nil
	}
	r := nodeReport(node.Name, st, active, partsOf, blocked, slots, record.validated.window)
	r.Pulling, r.StartedFirst = pulling, twice
	ctx, cancel := context.WithTimeout(ctx, rm.opts.EtcdTimeout)
	defer cancel()
	if empty {
		if err := rm.store.DeleteReport(ctx, st.ID, node.Name); err != nil {
			return err
		}
		record.reported, record.reportedDigest, record.reportedBlocked, record.reportedSlots, record.status = false, 0, nil, nil, &st
		record.reportedPulling, record.reportedStartedFirst = nil, nil
		rm.states.publish(st.ID, nil, nil)
		return nil
	}
	st.LastSyncTime = rm.now().UTC()
	r.Status = st
	if err := rm.store.PutReport(ctx, r, node.Lease, nil); err != nil {
		return err
	}
	record.reported, record.reportedDigest, record.reportedBlocked, record.reportedSlots, record.status = true, tasksDigest(r.Tasks), blocked, slots, &st
	record.reportedPulling, record.reportedStartedFirst = pulling, twice
	rm.states.publish(st.ID, &st, pulling)
	return nil
}

// claimSlots writes the slots this node is about to create containers of
// into its report before it does, and those whose successor it starts
// next to an outdated container into the report's startedFirst, in a
// transaction that checks each such slot is still assigned to it as it
// saw it; so no leader gives a slot to another node, or its room to
// another slot, while this one may run it (docs/NODES.md). It returns
// whether the node may create: for all of the creates, or none when an
// assignment changed meanwhile (the watch brings it). The claim goes
// into d.state, the state the sync leaves: a report that fails after the
// creates must not make the node forget it. The claim's status is the
// last the node reported; a node new to the controller has nothing of it
// at the spec's revision, and says so (a status of revision 0 would set
// the leader's observedRevision back).
func (rm *Agent) claimSlots(ctx context.Context, id string, revision int64, d *decision, assigned registry.SlotAssignments, inits []api.Task) (bool, error) {
	record, creates := &d.state, createdSlots(d.creates)
	twice := startedFirstSlots(withoutTasks(d.active, d.deletes), inits, creates)
	var cmps []clientv3.Cmp
	for _, slot := range creates {
		if !slices.Contains(record.reportedSlots, slot) || slices.Contains(twice, slot) && !slices.Contains(record.reportedStartedFirst, slot) {
			a, _ := assigned.Get(slot)
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(rm.store.AssignmentKey(id, slot)), "=", a.Rev))
		}
	}
	if len(cmps) == 0 {
		return true, nil
	}
	st := api.ReplicationControllerStatus{ID: id, CreationTimestamp: rm.now().UTC(), ObservedRevision: revision}
	if record.status != nil {
		st = *record.status
	}
	slots := runSlots(assigned, slices.Concat(d.active, inits))
	r := nodeReport(rm.opts.Node.Name, st, rm.digests.fill(d.active), rm.digests.fillParts(rm.partsIndex(id)), record.reportedBlocked, slots, record.validated.window)
	r.Pulling, r.StartedFirst = record.reportedPulling, twice
	ctx, cancel := context.WithTimeout(ctx, rm.opts.EtcdTimeout)
	defer cancel()
	if err := rm.store.PutReport(ctx, r, rm.opts.Node.Lease, cmps); err != nil {
		if errors.Is(err, registry.ErrReportRefused) {
			return false, nil
		}
		return false, err
	}
	record.reported, record.reportedDigest, record.reportedSlots, record.status = true, tasksDigest(r.Tasks), slots, &st
	record.reportedStartedFirst = twice
	return true, nil
}

// readReports returns this node's reports by controller id, so that a
// restarted node knows what it reported before.
func (rm *Agent) readReports(ctx context.Context) (map[string]*api.NodeReport, error) {
	all, err := rm.store.ListReports(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string]*api.NodeReport{}
	for i := range all {
		if all[i].Node == rm.opts.Node.Name {
			out[all[i].Status.ID] = &all[i]
		}
	}
	return out, nil
}
