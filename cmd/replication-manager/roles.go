package main

// This file builds the manager's roles (registry/roles) from the daemon's
// flags, with the metrics of its roles: whether it leads, whether it acts
// for its node, and the leader's view of the nodes and the controllers.

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// newRoles builds the roles of a manager of engine; its metrics go to reg.
func newRoles(client *clientv3.Client, store *registry.Store, opts *options, docker agent.TaskControlInterface, logger *slog.Logger,
	engine api.Engine, reg prometheus.Registerer) *roles.Roles {
	isLeader, isActing, nodes := roleMetrics()
	// Validate checked both
	labels, _ := api.ParseNodeLabels(opts.NodeLabels)
	reserved, _ := api.ParseNodeReserve(opts.NodeReserve)
	r := roles.New(roles.Options{
		Client: client, Store: store, Logger: logger, TaskControl: docker,
		Node: api.Node{Name: engine.Name, Labels: labels, EngineID: engine.ID,
			Capacity: api.NodeCapacity{CPUs: engine.CPUs, Memory: engine.Memory}, Reserved: reserved},
		Identity: opts.LeaderElectIdentity, LeaseDuration: opts.LeaderElectLeaseDuration,
		LeaderElect: opts.LeaderElect, StopWhenIsolated: opts.StopWhenIsolated,
		SyncPeriod: opts.SyncPeriod, RelistPeriod: opts.RelistPeriod, Workers: opts.Workers,
		BurstReplicas: opts.BurstReplicas, RevisionHistoryLimit: opts.RevisionHistoryLimit,
		MaxReplicas: opts.MaxReplicas, DrainTimeout: opts.ShutdownGracePeriod, Policy: opts.policy(),
		MaxStopGrace: opts.maxStopGrace(), NodeGrace: opts.NodeGrace, Registerer: reg,
		OnLead: gaugeOf(isLeader), OnAct: gaugeOf(isActing),
	})
	nodes.current = r.Leader
	reg.MustRegister(isLeader, isActing, nodes, &controllerCollector{current: r.Leader})
	return r
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
