package roles

// This file publishes the leader's policy when its term starts
// (docs/CONTRACT.md, etcd layout, <prefix>/meta/policy): what its
// --allow-* flags and --max-replicas accept, so that rcctl refuses up
// front what this leader would refuse. It is a leader's write like the
// others, guarded by the election, and it goes in before the term's first
// decision: once a leader acts, the published policy is its own.

import (
	"context"
	"errors"
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/registry"
)

// publishPolicy writes p under guard, retrying while etcd does not
// answer, until ctx ends. A guard that fails (the term is over) or a
// refusal by etcd is returned at once.
func publishPolicy(ctx context.Context, store *registry.Store, guard []clientv3.Cmp, p registry.Policy, logger *slog.Logger) error {
	var lost error
	err := registry.RetryEtcd(ctx, logger, "publishing the policy failed", func() error {
		wctx, cancel := context.WithTimeout(ctx, registry.DefaultEtcdTimeout)
		defer cancel()
		err := store.PublishPolicy(wctx, guard, p)
		if errors.Is(err, registry.ErrNotLeader) {
			lost = err
			return nil
		}
		return err
	})
	if lost != nil {
		return lost
	}
	if err != nil {
		return err
	}
	logger.Info("policy published", "key", store.PolicyKey(), "maxReplicas", p.MaxReplicas)
	return nil
}
