package roles

// This file is the node's part of a manager (docs/CONTRACT.md, Nodes): the
// Docker engine this manager talks to is a node. For each term of the
// node's election, the manager registers the node under the term's
// session lease and runs an agent.Agent that keeps the slots the
// leader assigns to this node, on this engine only. With
// --stop-when-isolated it also watches the lease's renewals, and removes
// the node's containers once they stop, before the lease can run out on
// etcd's side and the leader moves the slots elsewhere.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
)

// errIsolated ends a node's term when its lease could not be renewed.
var errIsolated = errors.New("isolated from etcd: the node's lease could not be renewed")

// nodeAgent acts for one node, one term at a time.
type nodeAgent struct {
	client   *clientv3.Client
	store    *registry.Store
	logger   *slog.Logger // carries node=, the node's name
	docker   agent.TaskControlInterface
	identity string
	// node is the registration, without its lease and time.
	node api.Node
	ttl  time.Duration
	// stopWhenIsolated removes the node's containers once the lease's
	// renewals stop (--stop-when-isolated).
	stopWhenIsolated bool
	newManager       func(tc agent.TaskControlInterface, node *agent.NodeOptions) *agent.Agent
	// stopWait is how long a term waits for its manager once ctx has
	// ended (StopWait of its drain).
	stopWait time.Duration
	// current is the manager of the term in progress, for /readyz and the
	// status page.
	current atomic.Pointer[agent.Agent]
}

// term registers the node and runs its manager until ctx ends or the node
// is isolated. Once the daemon stops it waits for the manager (and for
// the removal of an isolated node's containers) at most stopWait, then
// returns without them: the stop must not wait on an etcd that does not
// answer, and the leader's endTerm fences their Docker calls off at once.
func (a *nodeAgent) term(ctx context.Context, t term) error {
	lease := t.session.Lease()
	if err := a.register(ctx, lease); err != nil {
		return err
	}
	cut := make(chan struct{})
	rm := a.newManager(&fencedTasks{TaskControlInterface: a.docker, session: t.session, cut: cut},
		&agent.NodeOptions{Name: a.node.Name, Lease: lease})
	a.current.Store(rm)
	defer a.current.Store(nil)

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var parts sync.WaitGroup
	var runErr error
	parts.Go(func() {
		runErr = rm.Run(runCtx)
		stop(nil) // the watchdog has nothing left to watch
	})
	if a.stopWhenIsolated {
		parts.Go(func() {
			if a.waitIsolated(runCtx, lease) {
				close(cut) // no change reaches Docker from the manager from now on
				stop(errIsolated)
				a.removeContainers(context.WithoutCancel(ctx), rm.RegistryID())
			}
		})
	}
	done := make(chan struct{})
	go func() {
		parts.Wait()
		close(done)
	}()
	if !waitAfterStop(t.stopped, done, a.stopWait) {
		a.logger.Warn("stopping: the node's manager did not stop in time; handing over without it",
			"waited", a.stopWait)
		return nil
	}
	if cause := context.Cause(runCtx); errors.Is(cause, errIsolated) {
		return cause
	}
	return runErr
}

// ManagerStopSlack is how long a node's term waits for its manager beyond
// the drain: after its workers have stopped, the manager flushes its
// queued events with one etcd write of up to registry.DefaultEtcdTimeout.
// Past the slack the term hands over without it; its Docker calls are
// fenced off by then.
const ManagerStopSlack = time.Second

// StopWait is how long a node's term waits for its manager once the
// manager stops, for a drain of the syncs in progress (zero: the agent's
// default): the drain, then ManagerStopSlack.
func StopWait(drain time.Duration) time.Duration {
	if drain <= 0 {
		drain = agent.DefaultDrainTimeout
	}
	return drain + ManagerStopSlack
}

// register writes the node's key under lease. Another engine registered
// under the same name is reported: its managers and this one would take
// turns acting for two engines as one node.
func (a *nodeAgent) register(ctx context.Context, lease clientv3.LeaseID) error {
	ctx, cancel := context.WithTimeout(ctx, registry.DefaultEtcdTimeout)
	defer cancel()
	if old, err := a.store.GetNode(ctx, a.node.Name); err == nil && old.EngineID != a.node.EngineID {
		a.logger.Error("another Docker engine is registered under this node name; give each engine its own --node-name",
			"engine", a.node.EngineID, "otherEngine", old.EngineID, "otherManager", old.Manager)
	}
	n := a.node
	n.Manager = a.identity
	n.Lease = fmt.Sprintf("%x", int64(lease))
	n.RegisteredAt = time.Now().UTC()
	if err := a.store.RegisterNode(ctx, &n, lease); err != nil {
		return fmt.Errorf("register node %s: %w", n.Name, err)
	}
	a.logger.Info("node registered", "labels", api.FormatLabels(n.Labels), "engine", n.EngineID, "lease", n.Lease)
	return nil
}

// isolationAfter is how long the node waits for a renewal of its lease
// before it counts itself isolated: half the lease, so that the other
// half is left to remove its containers before etcd lets the lease go.
func (a *nodeAgent) isolationAfter() time.Duration { return a.ttl / 2 }

// waitIsolated follows the renewals of lease and returns true once none
// came for isolationAfter; false when ctx ends first.
func (a *nodeAgent) waitIsolated(ctx context.Context, lease clientv3.LeaseID) bool {
	renewals, err := a.client.KeepAlive(ctx, lease)
	if err != nil {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(a.isolationAfter())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case _, ok := <-renewals:
			if !ok {
				// the lease is gone (expired, revoked) or the client closed
				return ctx.Err() == nil
			}
			timer.Reset(a.isolationAfter())
		case <-timer.C:
			return true
		}
	}
}

// removeContainers removes every container of this registry on the
// node's engine, in parallel, without waiting for etcd.
func (a *nodeAgent) removeContainers(ctx context.Context, registryID string) {
	if registryID == "" {
		a.logger.Error("isolated from etcd before the registry id was read; containers left running")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, a.ttl)
	defer cancel()
	tasks, err := a.docker.ListTasks(ctx, map[string]string{api.LabelRegistry: registryID})
	if err != nil {
		a.logger.Error("isolated from etcd; listing the containers to remove failed", "err", err)
		return
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for _, t := range tasks {
		wg.Go(func() {
			if err := a.docker.DeleteTask(ctx, t.ID); err != nil && !errors.Is(err, api.ErrPreStopFailed) {
				failed.Add(1)
				a.logger.Error("isolated from etcd; removing a container failed", "container", t.Name, "err", err)
			}
		})
	}
	wg.Wait()
	a.logger.Warn("isolated from etcd: removed this node's containers (--stop-when-isolated), so that its slots run nowhere twice",
		"removed", len(tasks)-int(failed.Load()), "failed", failed.Load())
}

// waitAfterStop waits until done is closed; once stopped is closed it
// waits at most after more. It reports whether done was closed.
func waitAfterStop(stopped, done <-chan struct{}, after time.Duration) bool {
	select {
	case <-done:
		return true
	case <-stopped:
	}
	timer := time.NewTimer(after)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}
