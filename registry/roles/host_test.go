package roles

// This file is one host as the daemon composes it, for the benchmarks of
// one host (hostbench_test.go): a manager built by New, as
// cmd/replication-manager builds it from its default flags, on a task
// control of the benchmark's and the package's embedded etcd. It wins
// both elections at once, registers its node under its term's session
// (kept alive until the stop) and runs the leader and the node's agent
// side by side on one Store, its Docker calls fenced by the session.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
)

const (
	// hostNodeName names the node when the task control does not say
	// which engine it is (bareTasks).
	hostNodeName = "rm-bench"
	// hostStartTimeout bounds the wait for the roles to start: the
	// elections won, the node registered, the leader running.
	hostStartTimeout = time.Minute
)

// engineTeller is a task control that says which engine it is, as
// taskcontrol.Docker and taskcontrol.Fake do; the daemon names its node
// after it.
type engineTeller interface {
	Engine(ctx context.Context) (api.Engine, error)
}

// host is a running manager: its leader and its node.
type host struct {
	roles *Roles
	// rm is the node's manager, sched the leader.
	rm    *agent.Agent
	sched *leader.ReplicationManager
	node  string
	// started is when the roles began to run.
	started time.Time

	cancel context.CancelFunc
	done   chan error
	stop   func() error
}

// hostOptions are the options of a host's manager: the daemon's defaults
// (LeaderWorkers of the default workers), and the ones a benchmark sets.
func hostOptions(client *clientv3.Client, store *registry.Store, tc agent.TaskControlInterface, logger *slog.Logger,
	node api.Node, set func(*Options)) Options {
	opts := Options{
		Client: client, Store: store, Logger: logger, TaskControl: tc, Node: node,
		Identity: "rm-bench", LeaderElect: true,
		RelistPeriod: agent.DefaultRelistPeriod, NodeGrace: leader.DefaultNodeGrace,
	}
	set(&opts)
	return opts
}

// startHost runs a manager on tc with the options set sets until stop.
// It returns once both roles run.
func startHost(ctx context.Context, client *clientv3.Client, store *registry.Store, tc agent.TaskControlInterface,
	logger *slog.Logger, set func(*Options)) (*host, error) {
	node := api.Node{Name: hostNodeName, EngineID: "rm-bench-" + hostNodeName, Capacity: api.NodeCapacity{CPUs: runtime.NumCPU()}}
	if e, ok := tc.(engineTeller); ok {
		engine, err := e.Engine(ctx)
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		node.Name, node.EngineID, node.Capacity = engine.Name, engine.ID, api.NodeCapacity{CPUs: engine.CPUs, Memory: engine.Memory}
	}
	h := &host{roles: New(hostOptions(client, store, tc, logger, node, set)), node: node.Name, done: make(chan error, 1)}
	runCtx, cancel := context.WithCancel(ctx)
	h.cancel, h.started = cancel, time.Now()
	go func() { h.done <- h.roles.Run(runCtx) }()
	var stopErr error
	stopped := false
	h.stop = func() error {
		if !stopped {
			stopped = true
			h.cancel()
			stopErr = <-h.done
		}
		return stopErr
	}
	_, err := testpoll.Wait(ctx, hostStartTimeout, func() error {
		if h.roles.Agent() == nil || h.roles.Leader() == nil {
			return errors.New("not acting for the node and leading yet")
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("host: the roles did not start: %w", err), h.stop())
	}
	h.rm, h.sched = h.roles.Agent(), h.roles.Leader()
	return h, nil
}
