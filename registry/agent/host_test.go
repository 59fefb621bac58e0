package agent

// This file is one host as the daemon composes it (cmd/replication-manager
// roles.go and node.go), for the benchmarks of one host (hostbench_test.go): the node registered under a lease of its own, kept alive, and
// the leader's ReplicationManager and the node's Agent run side by side
// on one Store. The leader decides each slot and writes its assignment;
// the node runs the slots assigned to it and reports on them; the leader
// writes the statuses from the reports. There is no election here (the
// daemon's --leader-elect guard is one comparison more per leader write,
// and its fencing of the Docker calls one check of the session), and the
// scheduler's options are those the daemon derives from its flags.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

const (
	// hostNodeName names the node when the task control does not say
	// which engine it is (bareTasks).
	hostNodeName = "rm-bench"
	// hostLeaseTTL is the node's lease, the daemon's default session TTL
	// (--leader-elect-lease-duration); it is kept alive until the stop.
	hostLeaseTTL = 15 * time.Second
)

// engineTeller is a task control that says which engine it is, as
// taskcontrol.Docker and taskcontrol.Fake do; the daemon names its node
// after it.
type engineTeller interface {
	Engine(ctx context.Context) (api.Engine, error)
}

// host is a running leader and node.
type host struct {
	// rm is the node's manager, sched the leader.
	rm    *Agent
	sched *leader.ReplicationManager
	node  string
	lease clientv3.LeaseID
	// started is when both began to run, the node registered.
	started time.Time

	client *clientv3.Client
	cancel context.CancelFunc
	done   chan error // one value per role
	// stopKeepAlive ends the lease's renewals; keepAlive is closed once
	// they have ended.
	stopKeepAlive context.CancelFunc
	keepAlive     chan struct{}

	stopOnce sync.Once
	stopErr  error
}

// schedulerOptions are the leader's options for a node manager's: the
// values the daemon passes both from its flags (roles.go), and the
// daemon's default node grace. Workers is the manager's too, which every
// part leaves at the default: roles.go does not pass --workers to the
// scheduler, so the daemon's is always the default.
func schedulerOptions(opts Options) leader.Options {
	return leader.Options{
		NodeGrace: leader.DefaultNodeGrace, SyncPeriod: opts.SyncPeriod, MaxReplicas: opts.MaxReplicas,
		Policy: opts.Policy, RevisionHistoryLimit: opts.RevisionHistoryLimit, Workers: opts.Workers,
	}
}

// startHost registers the node of tc under a new lease and runs the leader
// and the node's manager of opts (opts.Node is filled in) until stop. It
// returns once both run.
func startHost(ctx context.Context, client *clientv3.Client, store *registry.Store, tc TaskControlInterface,
	logger *slog.Logger, opts Options) (*host, error) {
	node := api.Node{Name: hostNodeName, EngineID: "rm-bench-" + hostNodeName,
		Capacity: api.NodeCapacity{CPUs: runtime.NumCPU()}, Manager: "rm-bench"}
	if e, ok := tc.(engineTeller); ok {
		engine, err := e.Engine(ctx)
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		node.Name, node.EngineID, node.Capacity = engine.Name, engine.ID, api.NodeCapacity{CPUs: engine.CPUs, Memory: engine.Memory}
	}
	lease, err := store.GrantLease(ctx, hostLeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	keepCtx, stopKeepAlive := context.WithCancel(context.WithoutCancel(ctx))
	renewals, err := client.KeepAlive(keepCtx, lease)
	if err != nil {
		stopKeepAlive()
		_, _ = client.Revoke(context.WithoutCancel(ctx), lease)
		return nil, fmt.Errorf("host: keep the node's lease alive: %w", err)
	}
	h := &host{node: node.Name, lease: lease, client: client, done: make(chan error, 2),
		stopKeepAlive: stopKeepAlive, keepAlive: make(chan struct{})}
	go func() {
		defer close(h.keepAlive)
		for range renewals { // drain, or the client complains
		}
	}()
	node.Lease = fmt.Sprintf("%x", int64(lease))
	node.RegisteredAt = time.Now().UTC()
	if err := store.RegisterNode(ctx, &node, lease); err != nil {
		return nil, errors.Join(fmt.Errorf("host: %w", err), h.revoke())
	}
	opts.Node = NodeOptions{Name: node.Name, Lease: lease}
	h.rm = New(store, tc, logger.With("node", node.Name), opts)
	h.sched = leader.NewReplicationManager(store, logger, schedulerOptions(opts))
	runCtx, cancel := context.WithCancel(ctx)
	h.cancel, h.started = cancel, time.Now()
	// as the daemon's roles: one that fails stops the other
	for _, run := range []func(context.Context) error{h.sched.Run, h.rm.Run} {
		go func() {
			err := run(runCtx)
			if err != nil {
				cancel()
			}
			h.done <- err
		}()
	}
	return h, nil
}

// stop stops both roles and revokes the node's lease, as the daemon's
// stop closes its sessions: the node's key and its reports go with it. It
// returns what the roles' Run returned; later calls return the same.
func (h *host) stop() error {
	h.stopOnce.Do(func() {
		h.cancel()
		var errs []error
		for range 2 {
			if err := <-h.done; err != nil {
				errs = append(errs, err)
			}
		}
		h.stopErr = errors.Join(append(errs, h.revoke())...)
	})
	return h.stopErr
}

// revoke ends the node's lease and waits for its renewals to stop.
func (h *host) revoke() error {
	ctx, cancel := context.WithTimeout(context.Background(), registry.DefaultEtcdTimeout)
	defer cancel()
	_, err := h.client.Revoke(ctx, h.lease)
	h.stopKeepAlive()
	select {
	case <-h.keepAlive:
	case <-ctx.Done():
	}
	if err != nil {
		return fmt.Errorf("host: revoke the node's lease: %w", err)
	}
	return nil
}
