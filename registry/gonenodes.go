package registry

// This file is the Store's part for gone nodes (docs/CONTRACT.md, Nodes):
// /registry/gonenodes/<node>, which the leader writes when a node's
// registration vanishes and removes when the node comes back or has been
// gone long enough, each write guarded by the leader's election; and
// which rcctl nodes forget removes on a user's word.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// ErrNodeRegistered is a gone node that cannot be forgotten: it is
// registered again.
var ErrNodeRegistered = errors.New("registry: the node is registered")

// GoneNodesPrefix is where the gone nodes are kept, with its trailing
// slash.
func (s *Store) GoneNodesPrefix() string { return s.prefix + "/gonenodes/" }

// GoneNodeKey is the key of the gone node node.
func (s *Store) GoneNodeKey(node string) string { return s.GoneNodesPrefix() + node }

// PutGoneNode writes g, if every comparison of guard holds (the leader's
// election); ErrNotLeader when one does not.
func (s *Store) PutGoneNode(ctx context.Context, guard []clientv3.Cmp, g *api.GoneNode) error {
	key := s.GoneNodeKey(g.Name)
	data, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return s.guarded(ctx, guard, key, clientv3.OpPut(key, string(data)))
}

// DeleteGoneNode removes the record of node, if every comparison of guard
// holds; a missing one is fine.
func (s *Store) DeleteGoneNode(ctx context.Context, guard []clientv3.Cmp, node string) error {
	key := s.GoneNodeKey(node)
	return s.guarded(ctx, guard, key, clientv3.OpDelete(key))
}

func (s *Store) guarded(ctx context.Context, guard []clientv3.Cmp, key string, op clientv3.Op) error {
	resp, err := s.client.Txn(ctx).If(guard...).Then(op).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("write %s: %w", key, err)
	case !resp.Succeeded:
		return fmt.Errorf("write %s: %w", key, ErrNotLeader)
	}
	return nil
}

// ListGoneNodes returns the gone nodes in name order; a record that does
// not decode is skipped.
func (s *Store) ListGoneNodes(ctx context.Context) ([]api.GoneNode, error) {
	var out []api.GoneNode
	_, err := s.listPrefix(ctx, s.GoneNodesPrefix(), func(_ string, value []byte, _, _ int64) {
		var g api.GoneNode
		if json.Unmarshal(value, &g) == nil && g.Name != "" {
			out = append(out, g)
		}
	})
	return out, err
}

// ForgetGoneNode removes the record of node, in one transaction that
// checks the node is not registered: ErrNodeRegistered when it is,
// ErrNotFound when there is no record.
func (s *Store) ForgetGoneNode(ctx context.Context, node string) error {
	key, nodeKey := s.GoneNodeKey(node), s.NodeKey(node)
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(nodeKey), "=", 0), clientv3.Compare(clientv3.CreateRevision(key), ">", 0)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(nodeKey, clientv3.WithCountOnly())).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("delete %s: %w", key, err)
	case resp.Succeeded:
		return nil
	case resp.Responses[0].GetResponseRange().GetCount() > 0:
		return fmt.Errorf("delete %s: %w", key, ErrNodeRegistered)
	}
	return fmt.Errorf("delete %s: %w", key, ErrNotFound)
}
