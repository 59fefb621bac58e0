package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/replication-manager/replication-manager/internal/etcdembed"
	"github.com/replication-manager/replication-manager/internal/etcdtls"
)

// embeddedReadyTimeout bounds how long the embedded etcd may take to start.
const embeddedReadyTimeout = 60 * time.Second

// startEmbeddedEtcd runs a single-member etcd inside the daemon, so that one
// command runs the whole thing. Errors say what to do: a port in use, a
// data dir that cannot be written. It gives up when ctx ends before etcd
// is ready.
func startEmbeddedEtcd(ctx context.Context, opts *options, logger *slog.Logger, etcdLog *etcdLogger) (*embed.Etcd, error) {
	clientURLs, err := parseURLs("--etcd-listen-client-urls", opts.EtcdListenClientURLs)
	if err != nil {
		return nil, err
	}
	peerURLs, err := parseURLs("--etcd-listen-peer-urls", opts.EtcdListenPeerURLs)
	if err != nil {
		return nil, err
	}
	if err := checkDataDir(opts.EtcdDataDir); err != nil {
		return nil, err
	}

	cfg := embed.NewConfig()
	cfg.Name = "replication-manager"
	cfg.Dir = opts.EtcdDataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = clientURLs, clientURLs
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = peerURLs, peerURLs
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peerURLs[0].String())
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(etcdLog.Zap())
	etcdembed.Configure(cfg)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("embedded etcd: %w: another etcd (or another replication-manager) is listening there; stop it, pick other --etcd-listen-client-urls/--etcd-listen-peer-urls, or use it with --etcd-servers", err)
		}
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		closeEmbeddedEtcd(e, logger)
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(embeddedReadyTimeout):
		closeEmbeddedEtcd(e, logger)
		return nil, fmt.Errorf("embedded etcd: not ready after %s", embeddedReadyTimeout)
	case <-ctx.Done():
		closeEmbeddedEtcd(e, logger)
		return nil, ctx.Err()
	}
	logger.Info("embedded etcd started", "dataDir", opts.EtcdDataDir, "clientURLs", opts.EtcdListenClientURLs)
	return e, nil
}

// closeEmbeddedEtcd closes e, waiting at most embeddedCloseTimeout. etcd
// waits up to its request timeout (7s) for the streams of other clients
// to end before it cuts them; past embeddedCloseTimeout the close goes on
// without being waited for, and the process exits: etcd's data survives
// that as it survives a crash.
func closeEmbeddedEtcd(e *embed.Etcd, logger *slog.Logger) {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		e.Close()
	}()
	timer := time.NewTimer(embeddedCloseTimeout)
	defer timer.Stop()
	select {
	case <-closed:
	case <-timer.C:
		logger.Warn("embedded etcd: not closed yet; exiting without waiting for it (other clients' streams still open)", "waited", embeddedCloseTimeout)
	}
}

// checkDataDir makes sure the data dir exists and is writable, so that the
// failure reads as a data dir problem, not an etcd internals one.
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--etcd-data-dir %q is not usable: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return fmt.Errorf("--etcd-data-dir %q is not writable: %w", dir, err)
	}
	name := probe.Name()
	_ = probe.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("--etcd-data-dir %q: %w", dir, err)
	}
	return nil
}

func parseURLs(flag, list string) ([]url.URL, error) {
	var out []url.URL
	for _, s := range strings.Split(list, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("%s: %q is not an http(s)://host:port URL", flag, s)
		}
		out = append(out, *u)
	}
	return out, nil
}

// newEtcdClient connects to endpoints with the TLS and auth options.
// clientv3.New does not wait for a connection; the first request does, and
// reports a refused TLS handshake only as a timeout. So every https
// endpoint that accepts a connection is probed once here, and a handshake
// it refuses (an unknown CA, a missing or untrusted client certificate)
// fails at once with the TLS flags named: that does not heal by waiting.
// An endpoint that does not answer is not an error: requests wait for it.
func newEtcdClient(ctx context.Context, opts *options, endpoints []string, lg *zap.Logger) (*clientv3.Client, error) {
	flags := opts.etcdFlags()
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: opts.EtcdDialTimeout,
		Username:    flags.User,
		Password:    flags.Password,
		Logger:      lg,
		// gRPC's default reconnect backoff grows to two minutes; after an
		// etcd outage the manager should be back within seconds.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
			MinConnectTimeout: opts.EtcdDialTimeout,
		})},
	}
	if flags.TLSFiles() {
		tlsInfo := transport.TLSInfo{TrustedCAFile: opts.EtcdCAFile, CertFile: opts.EtcdCertFile, KeyFile: opts.EtcdKeyFile}
		tlsCfg, err := tlsInfo.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS: %w", err)
		}
		cfg.TLS = tlsCfg
	} else if anyHTTPS(endpoints) {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.TLS != nil {
		if err := etcdtls.Check(ctx, endpoints, cfg.TLS, opts.EtcdDialTimeout); err != nil {
			return nil, err
		}
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return client, nil
}

func anyHTTPS(endpoints []string) bool {
	for _, e := range endpoints {
		if strings.HasPrefix(e, "https://") {
			return true
		}
	}
	return false
}

// pingEtcd reports whether etcd answers a read within timeout.
func pingEtcd(ctx context.Context, client *clientv3.Client, key string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := client.Get(ctx, key, clientv3.WithCountOnly())
	return err
}
