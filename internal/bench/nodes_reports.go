package bench

// This file is the simulated nodes' side of the nodes part: what a node's
// manager writes back once the leader assigns it slots. For every
// controller a node has slots of, it keeps the node's report
// (api.NodeReport under /registry/reports/<id>/<node>, under the node's
// lease, as a node's manager writes it): the slots it runs (Slots), one
// running and ready container per slot of the assigned template (Tasks),
// and its share of the status. A report changes when an assignment naming
// the node is put or moves away; a node with no slot of a controller left
// has its report removed. A dead node writes nothing: its reports went
// with its lease.
//
// The reports are written from the assignments the part's watch sees, a
// few transactions of up to specBatch puts at a time: a real node writes
// each on its own (one put per sync), so the leader sees the same keys
// change, in fewer etcd transactions.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// simWriters is how many report transactions are in flight at once.
const simWriters = 4

// reportPair is one node's report on one controller.
type reportPair struct{ id, node string }

// simSlot is one slot a simulated node runs.
type simSlot struct {
	a     api.Assignment
	since time.Time
}

// assignmentChange is one assignment key put (a set) or deleted (a nil).
type assignmentChange struct {
	id   string
	slot int
	a    *api.Assignment
}

// simReports keeps and writes the simulated nodes' reports; safe for
// concurrent use.
type simReports struct {
	client *clientv3.Client
	store  *registry.Store
	log    func(format string, args ...any)

	mu     sync.Mutex
	leases map[string]clientv3.LeaseID
	dead   map[string]bool
	// nodeOf is the node each slot of each controller is assigned to.
	nodeOf map[string]map[int]string
	slots  map[reportPair]map[int]simSlot
	dirty  map[reportPair]bool
	kick   chan struct{}
	// writes counts the report puts and deletes written.
	writes int
}

func newSimReports(client *clientv3.Client, store *registry.Store, log func(string, ...any)) *simReports {
	return &simReports{
		client: client, store: store, log: log,
		leases: map[string]clientv3.LeaseID{}, dead: map[string]bool{},
		nodeOf: map[string]map[int]string{}, slots: map[reportPair]map[int]simSlot{}, dirty: map[reportPair]bool{},
		kick: make(chan struct{}, 1),
	}
}

// addNode makes node a simulated node, of lease.
func (r *simReports) addNode(node string, lease clientv3.LeaseID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leases[node] = lease
}

// kill stops node's writes; call it before its lease is revoked.
func (r *simReports) kill(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead[node] = true
}

// parseAssignment reads an assignment event into a change; false for a
// key that is not one slot's.
func (r *simReports) parseAssignment(key string, value []byte, put bool) (assignmentChange, bool) {
	rest := strings.TrimPrefix(key, r.store.AssignmentsPrefix())
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return assignmentChange{}, false
	}
	slot, err := strconv.Atoi(rest[i+1:])
	if err != nil {
		return assignmentChange{}, false
	}
	c := assignmentChange{id: rest[:i], slot: slot}
	if put {
		a, err := api.DecodeAssignment(value)
		if err != nil {
			return assignmentChange{}, false
		}
		c.a = &a
	}
	return c, true
}

// apply follows the changes of one watch response, seen at.
func (r *simReports) apply(changes []assignmentChange, at time.Time) {
	if len(changes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range changes {
		if old, ok := r.nodeOf[c.id][c.slot]; ok {
			pair := reportPair{c.id, old}
			delete(r.slots[pair], c.slot)
			r.dirty[pair] = true
			delete(r.nodeOf[c.id], c.slot)
		}
		if c.a == nil {
			continue
		}
		if r.nodeOf[c.id] == nil {
			r.nodeOf[c.id] = map[int]string{}
		}
		r.nodeOf[c.id][c.slot] = c.a.Node
		pair := reportPair{c.id, c.a.Node}
		if r.slots[pair] == nil {
			r.slots[pair] = map[int]simSlot{}
		}
		since := at
		if prev, ok := r.slots[pair][c.slot]; ok && prev.a.TemplateHash == c.a.TemplateHash {
			since = prev.since
		}
		r.slots[pair][c.slot] = simSlot{a: *c.a, since: since}
		r.dirty[pair] = true
	}
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// writeCount is the report puts and deletes written so far.
func (r *simReports) writeCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

// run writes the reports that changed until ctx ends.
func (r *simReports) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		if err := r.flush(ctx); err != nil && ctx.Err() == nil {
			r.log("simulated reports: %v; retrying", err)
			if sleepCtx(ctx, 50*time.Millisecond) != nil {
				return
			}
			select {
			case r.kick <- struct{}{}:
			default:
			}
		}
	}
}

// reportOp is one report's write.
type reportOp struct {
	pair reportPair
	op   clientv3.Op
}

// flush writes every report marked dirty, in transactions of specBatch,
// simWriters at a time. The pairs of a transaction that failed are marked
// again.
func (r *simReports) flush(ctx context.Context) error {
	ops := r.takeDirty()
	if len(ops) == 0 {
		return nil
	}
	batches := make(chan []reportOp)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range simWriters {
		wg.Go(func() {
			for batch := range batches {
				txn := make([]clientv3.Op, len(batch))
				for i, o := range batch {
					txn[i] = o.op
				}
				_, err := r.client.Txn(ctx).Then(txn...).Commit()
				r.mu.Lock()
				if err != nil {
					for _, o := range batch {
						r.dirty[o.pair] = true
					}
				} else {
					r.writes += len(batch)
				}
				r.mu.Unlock()
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for start := 0; start < len(ops); start += specBatch {
		batches <- ops[start:min(start+specBatch, len(ops))]
	}
	close(batches)
	wg.Wait()
	return firstErr
}

// takeDirty returns the writes of the reports marked dirty, and clears
// the marks; a dead node's are dropped.
func (r *simReports) takeDirty() []reportOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now().UTC()
	ops := make([]reportOp, 0, len(r.dirty))
	for pair := range r.dirty {
		delete(r.dirty, pair)
		lease, ok := r.leases[pair.node]
		if !ok || r.dead[pair.node] {
			continue
		}
		key := r.store.ReportKey(pair.id, pair.node)
		slots := r.slots[pair]
		if len(slots) == 0 {
			delete(r.slots, pair)
			ops = append(ops, reportOp{pair: pair, op: clientv3.OpDelete(key)})
			continue
		}
		data, err := json.Marshal(simReport(pair, slots, now))
		if err != nil {
			r.log("simulated report %s: %v", key, err)
			continue
		}
		ops = append(ops, reportOp{pair: pair, op: clientv3.OpPut(key, string(data), clientv3.WithLease(lease))})
	}
	return ops
}

// simReport is the report of a node that runs slots of controller
// pair.id, each a running and ready container of its assigned template.
func simReport(pair reportPair, slots map[int]simSlot, now time.Time) *api.NodeReport {
	n := len(slots)
	st := api.ReplicationControllerStatus{ID: pair.id, Replicas: n, ReadyReplicas: n, AvailableReplicas: n, UpdatedReplicas: n,
		CreationTimestamp: now, LastSyncTime: now}
	r := &api.NodeReport{Node: pair.node, Tasks: make([]api.ReportedTask, 0, n), Slots: slices.Sorted(maps.Keys(slots))}
	for _, slot := range r.Slots {
		s := slots[slot]
		st.ObservedRevision = max(st.ObservedRevision, s.a.Revision)
		if s.since.Before(st.CreationTimestamp) {
			st.CreationTimestamp = s.since.UTC()
		}
		name := fmt.Sprintf("%s-%d", pair.id, slot)
		r.Tasks = append(r.Tasks, api.ReportedTask{
			Name: name, ID: "sim-" + pair.node + "-" + name, Slot: slot, Image: "demo-task:latest", State: api.StateRunning,
			TemplateHash: s.a.TemplateHash, Created: s.since.UTC(), StartedAt: s.since.UTC(),
		})
	}
	slices.SortFunc(r.Tasks, func(a, b api.ReportedTask) int { return strings.Compare(a.Name, b.Name) })
	r.Status = st
	return r
}
