package registry

// This file is what makes a ReplicationManager one node of several
// (DESIGN.md section 8): it follows the assignments, keeps the slots the
// leader gave this node and queues a controller when its share changes;
// and instead of the controller's status, which the leader writes, it
// writes the node's report on its share, under the node's lease.

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// NodeOptions make a manager act as one node of several.
type NodeOptions struct {
	// Name is the node's name, as registered under /registry/nodes/.
	Name string
	// Lease is the node's session lease; its reports live under it.
	Lease clientv3.LeaseID
}

// nodeSlots are the slots assigned to this node, by controller.
type nodeSlots struct {
	name string
	mu   sync.Mutex
	// slots holds, per controller, the slots assigned here.
	slots map[string]map[int]bool
	// listed is closed once the first list of assignments is in.
	listed   chan struct{}
	isListed bool
	// changed is called with each controller whose share changed.
	changed func(id string)
	store   *Store
}

func newNodeSlots(store *Store, name string, changed func(string)) *nodeSlots {
	return &nodeSlots{name: name, store: store, slots: map[string]map[int]bool{}, listed: make(chan struct{}), changed: changed}
}

// of returns the slots assigned here to controller id: a copy, never nil.
func (n *nodeSlots) of(id string) map[int]bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[int]bool, len(n.slots[id]))
	maps.Copy(out, n.slots[id])
	return out
}

// has reports whether any slot of id is assigned here.
func (n *nodeSlots) has(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.slots[id]) > 0
}

func (n *nodeSlots) reset(keys []kv, _ int64) {
	all := map[string]map[int]bool{}
	for _, k := range keys {
		if id, slot, ok := n.store.parseAssignmentKey(k.key); ok && string(k.value) == n.name {
			if all[id] == nil {
				all[id] = map[int]bool{}
			}
			all[id][slot] = true
		}
	}
	n.mu.Lock()
	var changed []string
	for id := range all {
		if !maps.Equal(all[id], n.slots[id]) {
			changed = append(changed, id)
		}
	}
	for id := range n.slots {
		if _, ok := all[id]; !ok {
			changed = append(changed, id)
		}
	}
	n.slots = all
	if !n.isListed {
		n.isListed = true
		close(n.listed)
	}
	n.mu.Unlock()
	for _, id := range changed {
		n.changed(id)
	}
}

func (n *nodeSlots) put(k kv) {
	id, slot, ok := n.store.parseAssignmentKey(k.key)
	if !ok {
		return
	}
	mine := string(k.value) == n.name
	n.mu.Lock()
	had := n.slots[id][slot]
	switch {
	case mine && !had:
		if n.slots[id] == nil {
			n.slots[id] = map[int]bool{}
		}
		n.slots[id][slot] = true
	case !mine && had:
		n.dropLocked(id, slot)
	}
	n.mu.Unlock()
	if mine != had {
		n.changed(id)
	}
}

func (n *nodeSlots) del(key string, _ int64) {
	id, slot, ok := n.store.parseAssignmentKey(key)
	if !ok {
		return
	}
	n.mu.Lock()
	had := n.slots[id][slot]
	n.dropLocked(id, slot)
	n.mu.Unlock()
	if had {
		n.changed(id)
	}
}

func (n *nodeSlots) dropLocked(id string, slot int) {
	delete(n.slots[id], slot)
	if len(n.slots[id]) == 0 {
		delete(n.slots, id)
	}
}

// nodeReport is the report of this node's share of a controller, from
// its status and its active containers.
func nodeReport(node string, st api.ReplicationControllerStatus, active []api.Task, blocked []int) *api.NodeReport {
	r := &api.NodeReport{Node: node, Status: st, Tasks: make([]api.ReportedTask, 0, len(active)), BlockedSlots: blocked}
	for _, t := range active {
		slot := slotOf(t)
		if slot == noSlot {
			slot = 0
		}
		r.Tasks = append(r.Tasks, api.ReportedTask{
			Name: t.Name, ID: t.ID, Slot: slot, Image: t.Image, State: t.State, Health: t.Health,
			TemplateHash: t.Labels[api.LabelTemplateHash], Created: t.Created, StartedAt: t.StartedAt,
		})
	}
	slices.SortFunc(r.Tasks, func(a, b api.ReportedTask) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// writeReport stores the node's report on a controller when it changed,
// or removes it once the node has nothing of the controller left: a node
// without a slot or a container of a controller does not report on it.
func (rm *ReplicationManager) writeReport(ctx context.Context, record *controllerState, st api.ReplicationControllerStatus, active []api.Task, blocked []int) error {
	node := rm.opts.Node
	empty := st.Replicas == 0 && !rm.slots.has(st.ID) && st.FindCondition(api.ConditionReplicaFailure) == nil
	r := nodeReport(node.Name, st, active, blocked)
	if empty && !record.reported {
		record.status = &st
		return nil
	}
	if prev := record.status; record.reported && !empty && prev != nil && sameStatus(*prev, st) &&
		slices.Equal(record.reportedTasks, r.Tasks) && slices.Equal(record.reportedBlocked, blocked) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, rm.opts.EtcdTimeout)
	defer cancel()
	if empty {
		if err := rm.store.DeleteReport(ctx, st.ID, node.Name); err != nil {
			return err
		}
		record.reported, record.reportedTasks, record.reportedBlocked, record.status = false, nil, nil, &st
		return nil
	}
	st.LastSyncTime = rm.now().UTC()
	r.Status = st
	if err := rm.store.PutReport(ctx, r, node.Lease); err != nil {
		return err
	}
	record.reported, record.reportedTasks, record.reportedBlocked, record.status = true, r.Tasks, blocked, &st
	rm.published.Store(st.ID, &st)
	return nil
}

// readReports returns this node's reports by controller id, so that a
// restarted node knows what it reported before.
func (rm *ReplicationManager) readReports(ctx context.Context) (map[string]*api.NodeReport, error) {
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
