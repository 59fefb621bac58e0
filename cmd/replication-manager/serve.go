package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/replication-manager/replication-manager/registry"
)

// taskControl is the Docker side serve runs on: what the manager needs,
// plus a ping for /readyz. run gives the Docker client; tests a fake.
type taskControl interface {
	registry.TaskControlInterface
	Ping(ctx context.Context) error
}

// serve wires etcd, the task control, the HTTP endpoints and the manager
// together and runs them until ctx ends. It returns nil after a clean stop.
// Containers are left running when it returns.
func serve(ctx context.Context, opts *options, logger *slog.Logger, docker taskControl) error {
	endpoints := opts.EtcdServers
	if len(endpoints) == 0 {
		etcdLog := newEtcdLogger(logger)
		etcd, eps, err := startEmbeddedEtcd(opts, logger, etcdLog)
		if err != nil {
			return err
		}
		defer func() {
			etcdLog.Quiet() // etcd logs its own clean stop as errors
			etcd.Close()
		}()
		endpoints = eps
	}
	clientLog := newEtcdLogger(logger)
	client, err := newEtcdClient(ctx, opts, endpoints, clientLog.Zap())
	if err != nil {
		return err
	}
	defer func() {
		clientLog.Quiet() // the client warns about calls cut short by the stop
		_ = client.Close()
	}()

	if risk := dockerTransportRisk(opts.dockerHost()); risk != "" {
		// only reached with --docker-allow-insecure-tcp: Validate refuses it otherwise
		logger.Warn("docker is reached without verified TLS; whoever can reach or intercept it controls this host", "host", opts.dockerHost(), "risk", risk)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if err := docker.Ping(pingCtx); err != nil {
		// not fatal: syncs fail and retry with backoff until Docker answers
		logger.Warn("docker does not answer yet; containers are managed once it does", "err", err)
	}
	cancel()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	isLeader := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "replication_manager_is_leader",
		Help: "1 while this instance leads and may change containers, else 0.",
	})
	reg.MustRegister(isLeader)
	store := registry.NewStore(client, opts.RegistryPrefix)
	managerOpts := registry.Options{
		SyncPeriod:           opts.SyncPeriod,
		Workers:              opts.Workers,
		BurstReplicas:        opts.BurstReplicas,
		RevisionHistoryLimit: opts.RevisionHistoryLimit,
		MaxReplicas:          opts.MaxReplicas,
		DrainTimeout:         opts.ShutdownGracePeriod,
		Policy:               opts.policy(),
		Registerer:           reg,
	}
	lead := &leader{
		client: client, store: store, logger: logger,
		identity: opts.LeaderElectIdentity, ttl: opts.LeaderElectLeaseDuration,
		newManager: func(tc registry.TaskControlInterface) *registry.ReplicationManager {
			return registry.NewReplicationManager(store, tc, logger, managerOpts)
		},
		onLead: func(v bool) {
			if v {
				isLeader.Set(1)
			} else {
				isLeader.Set(0)
			}
		},
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 2)
	running := 0
	if opts.MetricsBindAddress != "" && opts.MetricsBindAddress != "0" {
		ln, err := net.Listen("tcp", opts.MetricsBindAddress)
		if err != nil {
			return fmt.Errorf("--metrics-bind-address: %w", err)
		}
		handler := newHTTPHandler(reg, map[string]check{
			"etcd": func(ctx context.Context) error {
				return pingEtcd(ctx, client, store.ControllersPrefix(), 2*time.Second)
			},
			"docker": docker.Ping,
			"controllers-listed": func(context.Context) error {
				if !opts.LeaderElect {
					if rm := lead.current.Load(); rm == nil || !rm.Synced() {
						return fmt.Errorf("first list of controllers not done")
					}
					return nil
				}
				rm := lead.current.Load()
				if (rm != nil || lead.leading.Load()) && (rm == nil || !rm.Synced()) {
					// leading, but its manager has not listed yet
					return fmt.Errorf("first list of controllers not done")
				}
				return nil // a standby is ready to take over
			},
		}, newStatusPage(daemonSource{current: lead.current.Load, store: store, leaderElect: opts.LeaderElect}, logger, time.Now))
		running++
		go func() { errc <- serveHTTP(runCtx, ln, handler) }()
		logger.Info("serving metrics, health and the status page", "address", ln.Addr().String(), "page", "http://"+ln.Addr().String()+"/")
	}

	running++
	if opts.LeaderElect {
		go func() { errc <- lead.run(runCtx, docker) }()
	} else {
		go func() {
			lead.setLeading(true)
			rm := lead.newManager(docker)
			lead.current.Store(rm)
			errc <- rm.Run(runCtx)
		}()
	}
	logger.Info("replication manager started", "etcd", endpoints, "prefix", opts.RegistryPrefix,
		"syncPeriod", opts.SyncPeriod, "workers", opts.Workers, "burstReplicas", opts.BurstReplicas,
		"leaderElect", opts.LeaderElect)

	var firstErr error
	for ; running > 0; running-- {
		if err := <-errc; err != nil && firstErr == nil {
			firstErr = err
			stop() // one part failed: stop the rest
		}
	}
	if firstErr == nil {
		logger.Info("replication manager stopped; containers left running")
	}
	return firstErr
}
