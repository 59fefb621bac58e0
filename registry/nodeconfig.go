package registry

// This file is the Store's part for node configs (docs/CONTRACT.md, Node
// maintenance): /registry/nodeconfig/<node>, which users write (rcctl
// cordon, drain, label) and managers only read; the leader mirrors the
// prefix as it mirrors the nodes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// ErrNodeConfigChanged is a node config written by someone else since it
// was read: the write was refused.
var ErrNodeConfigChanged = errors.New("registry: the node config changed since it was read")

// NodeConfigPrefix is where the node configs live, with its trailing
// slash.
func (s *Store) NodeConfigPrefix() string { return s.prefix + "/nodeconfig/" }

// NodeConfigKey is the key of node's config.
func (s *Store) NodeConfigKey(node string) string { return s.NodeConfigPrefix() + node }

// ParseNodeConfigKey returns the node of a config key; ok is false for a
// key that is not one.
func (s *Store) ParseNodeConfigKey(key string) (node string, ok bool) {
	node, ok = strings.CutPrefix(key, s.NodeConfigPrefix())
	return node, ok && node != "" && !strings.Contains(node, "/")
}

// GetNodeConfig returns node's config and its key's ModRevision; an empty
// config and 0 when there is none.
func (s *Store) GetNodeConfig(ctx context.Context, node string) (api.NodeConfig, int64, error) {
	key := s.NodeConfigKey(node)
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return api.NodeConfig{}, 0, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return api.NodeConfig{}, 0, nil
	}
	c, err := api.DecodeNodeConfig(resp.Kvs[0].Value)
	if err != nil {
		return api.NodeConfig{}, 0, fmt.Errorf("get %s: %w", key, err)
	}
	return c, resp.Kvs[0].ModRevision, nil
}

// PutNodeConfig writes node's config if its key's ModRevision is still
// modRev (0: the key does not exist); ErrNodeConfigChanged when it
// changed.
func (s *Store) PutNodeConfig(ctx context.Context, node string, c api.NodeConfig, modRev int64) error {
	key := s.NodeConfigKey(node)
	if err := api.ValidateNodeName(node); err != nil {
		return fmt.Errorf("put %s: node name %w", key, err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(data))).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("put %s: %w", key, err)
	case !resp.Succeeded:
		return fmt.Errorf("put %s: %w", key, ErrNodeConfigChanged)
	}
	return nil
}

// UpdateNodeConfig reads node's config, changes it with change and writes
// it back, again from the top when someone wrote it meanwhile. It returns
// the config as written.
func (s *Store) UpdateNodeConfig(ctx context.Context, node string, change func(*api.NodeConfig) error) (api.NodeConfig, error) {
	for {
		c, rev, err := s.GetNodeConfig(ctx, node)
		if err != nil {
			return api.NodeConfig{}, err
		}
		if err := change(&c); err != nil {
			return api.NodeConfig{}, err
		}
		err = s.PutNodeConfig(ctx, node, c, rev)
		if err == nil || !errors.Is(err, ErrNodeConfigChanged) || ctx.Err() != nil {
			return c, err
		}
	}
}

// ListNodeConfigs returns every config that decodes, by node.
func (s *Store) ListNodeConfigs(ctx context.Context) (map[string]api.NodeConfig, error) {
	out := map[string]api.NodeConfig{}
	_, err := s.listPrefix(ctx, s.NodeConfigPrefix(), func(key string, value []byte, _, _ int64) {
		node, ok := s.ParseNodeConfigKey(key)
		if c, err := api.DecodeNodeConfig(value); ok && err == nil {
			out[node] = c
		}
	})
	return out, err
}
