package main

// This file puts the two parts every manager plays together (docs/CONTRACT.md,
// Nodes): it acts for its node (its Docker engine), in the node's
// election, and it may lead, in the leader's election, which schedules
// the slots over the nodes and writes the statuses; a leader's term starts
// by publishing its policy (policy.go). Without --leader-elect both act at
// once.

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// roles are a manager's two elections and what each term runs.
type roles struct {
	agent *nodeAgent
	node  *campaign
	lead  *campaign
	// nodes holds the leader of the term in progress.
	nodes *nodeCollector
}

// newRoles wires the roles of a manager of engine; its metrics go to reg.
func newRoles(client *clientv3.Client, store *registry.Store, opts *options, docker taskControl, logger *slog.Logger,
	engine api.Engine, reg prometheus.Registerer) *roles {
	isLeader, isActing, nodes := roleMetrics()
	reg.MustRegister(isLeader, isActing, nodes, &controllerCollector{current: &nodes.current})
	managerOpts := agent.Options{
		SyncPeriod:           opts.SyncPeriod,
		RelistPeriod:         opts.RelistPeriod,
		Workers:              opts.Workers,
		BurstReplicas:        opts.BurstReplicas,
		RevisionHistoryLimit: opts.RevisionHistoryLimit,
		MaxReplicas:          opts.MaxReplicas,
		DrainTimeout:         opts.ShutdownGracePeriod,
		Policy:               opts.policy(),
		MaxStopGrace:         opts.maxStopGrace(),
		Registerer:           reg,
	}
	// Validate checked both
	labels, _ := api.ParseNodeLabels(opts.NodeLabels)
	reserved, _ := api.ParseNodeReserve(opts.NodeReserve)
	agent := &nodeAgent{
		client: client, store: store, logger: logger.With("node", engine.Name), docker: docker,
		identity: opts.LeaderElectIdentity, ttl: opts.LeaderElectLeaseDuration, stopWhenIsolated: opts.StopWhenIsolated,
		node: api.Node{Name: engine.Name, Labels: labels, EngineID: engine.ID,
			Capacity: api.NodeCapacity{CPUs: engine.CPUs, Memory: engine.Memory}, Reserved: reserved},
		newManager: func(tc agent.TaskControlInterface, node *agent.NodeOptions) *agent.Agent {
			o := managerOpts
			o.Node = *node
			return agent.New(store, tc, logger, o)
		},
	}
	schedOpts := leader.Options{
		NodeGrace: opts.NodeGrace, SyncPeriod: opts.SyncPeriod, MaxReplicas: opts.MaxReplicas,
		Policy: opts.policy(), RevisionHistoryLimit: opts.RevisionHistoryLimit, Workers: leaderWorkers(opts.Workers),
	}
	r := &roles{
		agent: agent, nodes: nodes,
		node: &campaign{
			client: client, logger: logger, identity: opts.LeaderElectIdentity, ttl: opts.LeaderElectLeaseDuration,
			what: "act for node " + engine.Name, work: agent.term, onLead: gaugeOf(isActing),
		},
		lead: &campaign{
			client: client, logger: logger, identity: opts.LeaderElectIdentity, ttl: opts.LeaderElectLeaseDuration,
			what: "lead", onLead: gaugeOf(isLeader),
			work: func(ctx context.Context, t term) error {
				o := schedOpts
				o.Guard = t.guard()
				if err := publishPolicy(ctx, store, o.Guard, opts, logger); err != nil {
					return err
				}
				s := leader.NewReplicationManager(store, logger, o)
				nodes.current.Store(s)
				defer nodes.current.Store(nil)
				return s.Run(ctx)
			},
		},
	}
	if opts.LeaderElect {
		r.node.key = store.NodeElectionKey(engine.Name)
		r.lead.key = store.LeaderElectionKey()
	}
	return r
}

// run plays both roles until ctx ends or one fails for good; it then
// stops the other and returns the first error.
func (r *roles) run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- r.node.run(ctx) }()
	go func() { errc <- r.lead.run(ctx) }()
	var first error
	for range 2 {
		if err := <-errc; err != nil && first == nil {
			first = err
			stop()
		}
	}
	return first
}

// gaugeOf returns a function that sets g to 1 or 0.
func gaugeOf(g prometheus.Gauge) func(bool) {
	return func(v bool) {
		if v {
			g.Set(1)
		} else {
			g.Set(0)
		}
	}
}

// leaderWorkers is how many controllers the leader decides at once: its
// default, or four times --workers when that is more, as a decision is
// short and its write waits on etcd.
func leaderWorkers(nodeWorkers int) int {
	return max(leader.DefaultLeaderWorkers, 4*nodeWorkers)
}

// roleMetrics are the metrics of a manager's roles: whether it leads,
// whether it acts for its node, and the leader's view of the nodes (the
// controllers' series share its scheduler).
func roleMetrics() (isLeader, isActing prometheus.Gauge, nodes *nodeCollector) {
	isLeader = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "replication_manager_is_leader",
		Help: "1 while this instance leads: it schedules the slots over the nodes and writes the statuses, else 0.",
	})
	isActing = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "replication_manager_is_acting_for_node",
		Help: "1 while this instance acts for its node and may change its containers, else 0.",
	})
	return isLeader, isActing, &nodeCollector{}
}
