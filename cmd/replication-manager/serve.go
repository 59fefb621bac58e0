package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdembed"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
)

// taskControl is the Docker side serve runs on: what the manager needs,
// a ping for /readyz and the engine's own name and id for the node. run
// gives the Docker client; tests a fake.
type taskControl interface {
	agent.TaskControlInterface
	Ping(ctx context.Context) error
	Engine(ctx context.Context) (api.Engine, error)
}

// serve wires etcd, the task control, the HTTP endpoints and the manager
// together and runs them until ctx ends. It returns nil after a clean stop.
// Containers are left running when it returns. Every step of the stop has
// a deadline, also when etcd does not answer (stop.go has the sum).
//
// The HTTP endpoints come first, before anything that can block (startup.go):
// /livez answers at once, and /readyz says what the daemon waits for.
func serve(ctx context.Context, opts *options, logger *slog.Logger, docker taskControl) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	state := &startup{}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 2)
	running := 0
	// every return below first stops and waits for what has been started
	wait := func(firstErr error) error {
		stop()
		for ; running > 0; running-- {
			if err := <-errc; err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return firstErr
	}
	if opts.MetricsBindAddress != "" && opts.MetricsBindAddress != "0" {
		ln, err := net.Listen("tcp", opts.MetricsBindAddress)
		if err != nil {
			return fmt.Errorf("--metrics-bind-address: %w", err)
		}
		page := newStatusPage(startingSource{state: state, leaderElect: opts.LeaderElect}, logger, time.Now)
		page.cluster = clusterSource{state: state, leaderElect: opts.LeaderElect}
		handler := newHTTPHandler(reg, readinessChecks(state, opts, docker), page)
		handler = checkHost(handler, allowedHosts(opts.MetricsBindAddress, ln.Addr(), opts.HTTPAllowedHosts), logger)
		running++
		go func() { errc <- serveHTTP(runCtx, ln, handler) }()
		logger.Info("serving metrics, health and the status page", "address", ln.Addr().String(), "page", "http://"+ln.Addr().String()+"/")
	}

	var client *clientv3.Client
	quietClient := func() {}
	if len(opts.EtcdServers) == 0 {
		etcdLog := newEtcdLogger(logger)
		etcd, err := startEmbeddedEtcd(ctx, opts, logger, etcdLog)
		if err != nil {
			return wait(registry.UnlessStopped(ctx, err))
		}
		defer func() {
			etcdLog.Quiet() // etcd logs its own clean stop as errors
			closeEmbeddedEtcd(etcd, logger)
		}()
		// the roles call the etcd they embed in this process; other hosts'
		// managers reach it at its client URLs
		client, quietClient = etcdembed.Client(etcd), etcdLog.Quiet
	} else {
		clientLog := newEtcdLogger(logger)
		c, err := newEtcdClient(ctx, opts, opts.EtcdServers, clientLog.Zap())
		if err != nil {
			return wait(err)
		}
		client, quietClient = c, clientLog.Quiet
	}
	defer func() {
		quietClient() // the client warns about calls cut short by the stop
		_ = client.Close()
	}()
	store := registry.NewStore(client, opts.RegistryPrefix)
	state.etcd.Store(&etcdParts{client: client, store: store})

	logStopGrace(logger, opts)
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

	engine, err := nodeEngine(ctx, opts, docker, logger)
	if err != nil {
		return wait(registry.UnlessStopped(ctx, err))
	}
	r := newRoles(client, store, opts, docker, logger, engine, reg)
	state.roles.Store(r)

	running++
	go func() { errc <- r.Run(runCtx) }()
	logger.Info("replication manager started", "etcd", etcdAddress(opts), "prefix", opts.RegistryPrefix, "node", engine.Name,
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

// nodeEngine returns the engine this manager acts for, named --node-name
// when given. The engine's id and machine come from docker info, which is
// asked on a registry.Retry until Docker answers or ctx ends; a
// --node-reserve that leaves nothing of that machine to tasks is an error.
func nodeEngine(ctx context.Context, opts *options, docker taskControl, logger *slog.Logger) (api.Engine, error) {
	var engine api.Engine
	err := registry.Retry{Failed: func(err error, delay time.Duration) {
		logger.Warn("docker does not answer; the node registers once it does", "retryIn", delay, "err", err)
	}}.Do(ctx, func() (bool, error) {
		infoCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		engine, err = docker.Engine(infoCtx)
		return false, err
	})
	if err != nil {
		return api.Engine{}, err
	}
	if opts.NodeName != "" {
		engine.Name = opts.NodeName
	}
	if verr := api.ValidateNodeName(engine.Name); verr != nil {
		return api.Engine{}, fmt.Errorf("the engine's name cannot name a node (set --node-name): %w", verr)
	}
	reserved, _ := api.ParseNodeReserve(opts.NodeReserve) // Validate checked it
	if rerr := reserved.CheckReserve(api.NodeCapacity{CPUs: engine.CPUs, Memory: engine.Memory}); rerr != nil {
		return api.Engine{}, fmt.Errorf("--node-reserve %s: %w", opts.NodeReserve, rerr)
	}
	return engine, nil
}
