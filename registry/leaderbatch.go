package registry

// This file batches the leader's writes: the workers decide controllers in
// parallel, and their writes go to etcd together, several controllers in
// one transaction, so that 10,000 new controllers cost hundreds of round
// trips rather than 10,000. The transaction is guarded by the election as
// a single write is, and each controller's part keeps its own semantics:
// its assignment changes in a transaction of their own that compares what
// they replace (a conflict there refuses that controller's assignments
// only), and its status and history in another, unconditional one.

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Bounds of one batch, below etcd's default of 128 operations per
// transaction (--max-txn-ops), which etcd applies to the outer
// transaction and to each nested one separately.
const (
	// batchWrites is how many controllers' writes one transaction holds:
	// two nested transactions each.
	batchWrites = 24
	// batchChanges is the most assignment changes a write may have to be
	// batched; a larger one is written alone (commitLeader).
	batchChanges = 64
	// batchers is how many batches are in flight at once: etcd commits
	// concurrent transactions together, and a batch waits on the disk.
	batchers = 4
)

// batchedWrite is one controller's write waiting for its batch.
type batchedWrite struct {
	w    leaderWrite
	done chan batchResult
}

type batchResult struct {
	rev int64
	err error
}

// batchable reports whether w can go in a batch.
func batchable(w leaderWrite) bool {
	return len(w.changes) <= batchChanges && len(w.prune) < batchChanges && !w.forget
}

// runBatches writes what comes on writes in batches, each within timeout,
// until ctx ends.
func (s *Store) runBatches(ctx context.Context, guard []clientv3.Cmp, writes <-chan *batchedWrite, timeout time.Duration) {
	for {
		var first *batchedWrite
		select {
		case <-ctx.Done():
			return
		case first = <-writes:
		}
		batch := []*batchedWrite{first}
	more:
		for len(batch) < batchWrites {
			select {
			case bw := <-writes:
				batch = append(batch, bw)
			default:
				break more
			}
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		results := s.commitBatchOf(wctx, guard, batch)
		cancel()
		for i, bw := range batch {
			bw.done <- results[i]
		}
	}
}

// commitBatchOf writes batch in one guarded transaction.
func (s *Store) commitBatchOf(ctx context.Context, guard []clientv3.Cmp, batch []*batchedWrite) []batchResult {
	results := make([]batchResult, len(batch))
	var then []clientv3.Op
	casAt := make([]int, len(batch)) // index of each write's assignment transaction in then; -1: none
	for i, bw := range batch {
		cas, extra, err := s.leaderOps(bw.w)
		if err != nil {
			results[i].err = err
			casAt[i] = -1
			continue
		}
		casAt[i] = -1
		if cas != nil {
			casAt[i] = len(then)
			then = append(then, *cas)
		}
		if len(extra) > 0 {
			then = append(then, clientv3.OpTxn(nil, extra, nil))
		}
	}
	if len(then) == 0 {
		return results
	}
	resp, err := s.client.Txn(ctx).If(guard...).Then(then...).Commit()
	for i := range batch {
		switch {
		case results[i].err != nil:
		case err != nil:
			results[i].err = fmt.Errorf("write controller state: %w", err)
		case !resp.Succeeded:
			results[i].err = ErrNotLeader
		default:
			results[i].rev = resp.Header.Revision
			if at := casAt[i]; at >= 0 && !resp.Responses[at].GetResponseTxn().Succeeded {
				results[i].err = fmt.Errorf("write %d assignment(s) of %s: %w", len(batch[i].w.changes), batch[i].w.id, ErrAssignmentConflict)
			}
		}
	}
	return results
}
