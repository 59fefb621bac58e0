package registry

// This file is how the leader writes: everything it writes for one
// controller (its assignments, its status, a template for its history, or
// the removal of all three) goes in one etcd transaction that first
// compares the leader's election key. A failed comparison means another
// manager leads now: the write is refused as a whole and the term ends
// (ErrNotLeader). Assignment changes also compare the ModRevision of what
// they replace, in a transaction nested in the guarded one, so that a
// conflict (ErrAssignmentConflict) is told apart from a lost election.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// ErrNotLeader is a leader's write refused because this manager no longer
// holds the election: its term is over.
var ErrNotLeader = errors.New("registry: not leader: the election key changed")

// ErrAssignmentConflict is assignment writes refused because a key
// changed since the leader read it; the watch brings the change.
var ErrAssignmentConflict = errors.New("registry: assignments changed since they were read")

// assignmentBatch bounds the assignment changes of one transaction: etcd
// refuses more than 128 operations per transaction by default
// (--max-txn-ops), and the status and history ride along in the first.
const assignmentBatch = 100

// AssignChange is one assignment write: slot of id gets next, or loses its
// assignment when next is nil; oldRev is the key's ModRevision it replaces
// (0: no key).
type AssignChange struct {
	ID     string
	Slot   int
	OldRev int64
	Next   *api.Assignment
	// Data is the value the write puts for Next, set by Prepare (and
	// CommitLeader): the leader knows the watch's echo of its own write
	// by it.
	Data []byte
	// Rev is the revision of the transaction that wrote the change, set
	// by CommitLeader; 0 when it did not go in.
	Rev int64
}

// LeaderWrite is what the leader writes for one controller.
type LeaderWrite struct {
	ID      string
	Changes []AssignChange
	// Status to put; nil puts none.
	Status *api.ReplicationControllerStatus
	// Revision to record in the history, unless it is there already.
	Revision *api.Revision
	// Prune removes these revisions from the history.
	Prune []int64
	// Forget removes the status and the whole history.
	Forget bool
}

// CommitLeader writes w under guard (the leader's election comparison;
// none without an election). It returns the revision of the transaction
// that wrote the first batch of changes, or ErrNotLeader, or
// ErrAssignmentConflict when the other writes went in but assignments had
// changed. A write of more changes than one transaction takes goes in
// parts: each change's Rev says which revision wrote it (0: none).
func (s *Store) CommitLeader(ctx context.Context, guard []clientv3.Cmp, w LeaderWrite) (int64, error) {
	var first int64
	var conflict error
	for start := 0; start == 0 || start < len(w.Changes); start += assignmentBatch {
		part := LeaderWrite{ID: w.ID, Changes: w.Changes[start:min(start+assignmentBatch, len(w.Changes))]}
		if start == 0 {
			part.Status, part.Revision, part.Prune, part.Forget = w.Status, w.Revision, w.Prune, w.Forget
		}
		r := s.commitBatchOf(ctx, guard, []*BatchedWrite{s.Prepare(part, nil)})[0]
		switch {
		case errors.Is(r.Err, ErrAssignmentConflict):
			if conflict == nil {
				conflict = r.Err
			}
		case r.Err != nil:
			return first, r.Err
		default:
			for i := range part.Changes {
				part.Changes[i].Rev = r.Rev // part shares w's array
			}
		}
		if start == 0 {
			first = r.Rev
		}
	}
	return first, conflict
}

// CurrentRevision returns etcd's revision now: an upper bound of the
// revision of any write answered before it was asked.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, s.prefix, clientv3.WithCountOnly(), clientv3.WithLimit(1))
	if err != nil {
		return 0, fmt.Errorf("read the current revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// leaderOps returns w as operations: its assignment changes as one
// transaction comparing what they replace (nil for none), and the rest;
// and the bytes of the keys and values they put.
func (s *Store) leaderOps(w LeaderWrite) (*pb.RequestOp, []*pb.RequestOp, int, error) {
	extra, size, err := s.extraOps(w)
	if err != nil || len(w.Changes) == 0 {
		return nil, extra, size, err
	}
	cmps, ops, n, err := s.assignmentOps(w.Changes)
	if err != nil {
		return nil, nil, 0, err
	}
	return txnOp(cmps, ops...), extra, size + n, nil
}

// extraOps are w's writes besides the assignments: its status, its
// history record, the records it prunes, or the removal of all; and the
// bytes they put.
func (s *Store) extraOps(w LeaderWrite) ([]*pb.RequestOp, int, error) {
	var extra []*pb.RequestOp
	size := 0
	if w.Status != nil {
		key := s.StatusKey(w.ID)
		data, err := json.Marshal(w.Status)
		if err != nil {
			return nil, 0, fmt.Errorf("put %s: %w", key, err)
		}
		extra = append(extra, putOp(key, data))
		size += len(key) + len(data)
	}
	if r := w.Revision; r != nil {
		key := s.HistoryPrefix(w.ID) + strconv.FormatInt(r.Revision, 10)
		data, err := json.Marshal(r)
		if err != nil {
			return nil, 0, fmt.Errorf("put %s: %w", key, err)
		}
		extra = append(extra, txnOp([]*pb.Compare{absent(key)}, putOp(key, data)))
		size += 2*len(key) + len(data)
	}
	for _, rev := range w.Prune {
		extra = append(extra, deleteOp(s.HistoryPrefix(w.ID)+strconv.FormatInt(rev, 10)))
	}
	if w.Forget {
		extra = append(extra, deleteOp(s.StatusKey(w.ID)), deletePrefixOp(s.HistoryPrefix(w.ID)))
	}
	return extra, size, nil
}

// assignmentOps are the comparisons and writes of changes, and the bytes
// they put; it sets each change's Data.
func (s *Store) assignmentOps(changes []AssignChange) ([]*pb.Compare, []*pb.RequestOp, int, error) {
	cmps := make([]*pb.Compare, 0, len(changes))
	ops := make([]*pb.RequestOp, 0, len(changes))
	size := 0
	for i := range changes {
		c := &changes[i]
		key := s.AssignmentKey(c.ID, c.Slot)
		cmps = append(cmps, modRevisionIs(key, c.OldRev))
		size += len(key)
		if c.Next == nil {
			ops = append(ops, deleteOp(key))
			continue
		}
		data, err := json.Marshal(c.Next)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("put %s: %w", key, err)
		}
		c.Data = data
		ops = append(ops, putOp(key, data))
		size += len(key) + len(data)
	}
	return cmps, ops, size, nil
}
