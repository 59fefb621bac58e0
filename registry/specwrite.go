package registry

// This file writes several specs as one: a single etcd transaction that
// compares every key with what the client read (its ModRevision, or its
// absence) and puts the specs that change, so that a conflict on any one
// writes none. It is what makes rcctl apply of several documents
// all-or-nothing.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// MaxSpecsPerWrite is the most specs WriteControllers takes: one
// comparison each, and etcd refuses a transaction of more than 128
// comparisons by default (its --max-txn-ops).
const MaxSpecsPerWrite = 128

// ErrTooManySpecs is a WriteControllers of more than MaxSpecsPerWrite
// specs, or one that etcd found too large; nothing is written.
var ErrTooManySpecs = errors.New("registry: too many or too large specs for one etcd transaction")

// SpecWrite is one spec of WriteControllers, with what the client read of
// its key.
type SpecWrite struct {
	Controller *api.ReplicationController
	// ModRevision is the key's ModRevision when read; 0 means the key did
	// not exist.
	ModRevision int64
	// Unchanged compares the key and writes nothing: the spec is as read,
	// and stays so only if the whole write goes in.
	Unchanged bool
}

// SpecConflict is one spec whose key is no longer as read.
type SpecConflict struct {
	ID string
	// Now is the key's ModRevision at the time of the write; 0: it is gone.
	Now int64
	// Read is what the client read (0: the key did not exist).
	Read int64
}

// ConflictError is a WriteControllers refused because keys changed since
// they were read; nothing was written. It matches ErrConflict.
type ConflictError struct {
	Conflicts []SpecConflict
}

func (e *ConflictError) Error() string {
	ids := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		ids[i] = c.ID
	}
	return fmt.Sprintf("%s: %s", strings.Join(ids, ", "), ErrConflict)
}

// Is makes a ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// WriteControllers writes every spec of ws that is not Unchanged, in one
// transaction that first compares each key of ws with the ModRevision
// its SpecWrite says was read. It returns the transaction's revision; or a
// *ConflictError naming each key that changed, and writes nothing; or
// ErrTooManySpecs for more than MaxSpecsPerWrite, before asking etcd. Two
// writes of one id are refused.
func (s *Store) WriteControllers(ctx context.Context, ws []SpecWrite) (int64, error) {
	if len(ws) > MaxSpecsPerWrite {
		return 0, fmt.Errorf("%d specs: %w (at most %d)", len(ws), ErrTooManySpecs, MaxSpecsPerWrite)
	}
	cmps := make([]clientv3.Cmp, 0, len(ws))
	var puts, gets []clientv3.Op
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		key := s.ControllerKey(w.Controller.ID)
		if seen[key] {
			return 0, fmt.Errorf("write %s: given twice", key)
		}
		seen[key] = true
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", w.ModRevision))
		gets = append(gets, clientv3.OpGet(key, clientv3.WithKeysOnly()))
		if w.Unchanged {
			continue
		}
		data, err := api.Encode(w.Controller)
		if err != nil {
			return 0, fmt.Errorf("write %s: %w", key, err)
		}
		puts = append(puts, clientv3.OpPut(key, string(data)))
	}
	if len(ws) == 0 {
		return 0, nil
	}
	resp, err := s.client.Txn(ctx).If(cmps...).Then(puts...).Else(gets...).Commit()
	switch {
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		return 0, fmt.Errorf("write %d specs: %w: %w", len(ws), ErrTooManySpecs, err)
	case err != nil:
		return 0, fmt.Errorf("write %d specs: %w", len(ws), err)
	case resp.Succeeded:
		return resp.Header.Revision, nil
	}
	conflict := &ConflictError{}
	for i, w := range ws {
		var now int64
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
			now = kvs[0].ModRevision
		}
		if now != w.ModRevision {
			conflict.Conflicts = append(conflict.Conflicts, SpecConflict{ID: w.Controller.ID, Now: now, Read: w.ModRevision})
		}
	}
	return 0, conflict
}
