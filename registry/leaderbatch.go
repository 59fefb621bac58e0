package registry

// This file batches the leader's writes: the workers decide controllers
// and their writes go to etcd together, many controllers in one
// transaction, so that 10,000 new controllers cost hundreds of round
// trips rather than 10,000. The transaction is guarded by the election as
// a single write is, and each controller's part keeps its own semantics:
// its assignment changes go in a transaction of their own, nested, that
// compares what they replace (a conflict there refuses that controller's
// assignments only); its status and history go in the outer one.

import (
	"context"
	"fmt"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Bounds of one batch. etcd refuses more than --max-txn-ops operations
// in a transaction (128 by default), and counts against a nested one
// what the outer one holds; and a request above --max-request-bytes (1.5
// MiB by default).
const (
	maxTxnOps = 128
	// batchOps bounds the outer operations of a batch.
	batchOps = 96
	// batchChanges is the most assignment changes a write may have to be
	// batched: what batchOps leaves of maxTxnOps. A larger write goes
	// alone (commitLeader).
	batchChanges = maxTxnOps - batchOps
	// batchBytes bounds the keys and values a batch puts.
	batchBytes = 1 << 20
	// Batchers is how many batches are in flight at once: etcd commits
	// concurrent transactions together, and a batch waits on the disk.
	Batchers = 8
)

// BatchedWrite is one controller's write as operations, waiting for its
// batch.
type BatchedWrite struct {
	w LeaderWrite
	// cas holds the assignment changes (nil: none); extra the rest.
	cas   *pb.RequestOp
	extra []*pb.RequestOp
	// bytes are the keys and values it puts.
	bytes int
	Err   error
	// answer is told the outcome by the batcher that wrote it.
	answer func(BatchResult)
}

// BatchResult is a batched write's outcome: the revision its batch went
// in at, or why it did not.
type BatchResult struct {
	Rev int64
	Err error
}

// Prepare turns w into its operations; answer is told the outcome once a
// batcher has written it, on the batcher's goroutine, which waits for it.
func (s *Store) Prepare(w LeaderWrite, answer func(BatchResult)) *BatchedWrite {
	bw := &BatchedWrite{w: w, answer: answer}
	bw.cas, bw.extra, bw.bytes, bw.Err = s.leaderOps(w)
	return bw
}

// ops are the outer operations bw takes in a batch.
func (bw *BatchedWrite) ops() int {
	n := len(bw.extra)
	if bw.cas != nil {
		n++
	}
	return n
}

// Batchable reports whether bw can go in a batch.
func (bw *BatchedWrite) Batchable() bool {
	return bw.Err == nil && !bw.w.Forget && len(bw.w.Changes) <= batchChanges && bw.ops() <= batchOps && bw.bytes <= batchBytes
}

// RunBatches writes what comes on writes in batches, each within timeout,
// until ctx ends.
func (s *Store) RunBatches(ctx context.Context, guard []clientv3.Cmp, writes <-chan *BatchedWrite, timeout time.Duration) {
	var next *BatchedWrite // taken, but left for the next batch
	for {
		first := next
		if first == nil {
			select {
			case <-ctx.Done():
				return
			case first = <-writes:
			}
		}
		next = nil
		batch := []*BatchedWrite{first}
		ops, bytes := first.ops(), first.bytes
	more:
		for {
			select {
			case bw := <-writes:
				if ops+bw.ops() > batchOps || bytes+bw.bytes > batchBytes {
					next = bw
					break more
				}
				batch = append(batch, bw)
				ops, bytes = ops+bw.ops(), bytes+bw.bytes
			default:
				break more
			}
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		results := s.commitBatchOf(wctx, guard, batch)
		cancel()
		for i, bw := range batch {
			bw.answer(results[i])
		}
	}
}

// commitBatchOf writes batch in one guarded transaction.
func (s *Store) commitBatchOf(ctx context.Context, guard []clientv3.Cmp, batch []*BatchedWrite) []BatchResult {
	results := make([]BatchResult, len(batch))
	var then []*pb.RequestOp
	casAt := make([]int, len(batch)) // index of each write's assignment transaction in then; -1: none
	for i, bw := range batch {
		casAt[i] = -1
		if bw.Err != nil {
			results[i].Err = bw.Err
			continue
		}
		if bw.cas != nil {
			casAt[i] = len(then)
			then = append(then, bw.cas)
		}
		then = append(then, bw.extra...)
	}
	if len(then) == 0 {
		return results
	}
	resp, err := s.commitTxn(ctx, &pb.TxnRequest{Compare: compares(guard), Success: then})
	for i := range batch {
		switch {
		case results[i].Err != nil:
		case err != nil:
			results[i].Err = fmt.Errorf("write controller state: %w", err)
		case !resp.Succeeded:
			results[i].Err = ErrNotLeader
		default:
			results[i].Rev = resp.Header.Revision
			if at := casAt[i]; at >= 0 && !resp.Responses[at].GetResponseTxn().Succeeded {
				results[i].Err = fmt.Errorf("write %d assignment(s) of %s: %w", len(batch[i].w.Changes), batch[i].w.ID, ErrAssignmentConflict)
			}
		}
	}
	return results
}
