package bench

// This file starts the etcd that the scale measurements and the profiled
// convergence use: a real server, embedded in this process, on free
// loopback ports, with its data in a temporary directory. It is not
// internal/etcdtest, the tests' helper, because that imports testing, which
// rm-bench would then link.

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

const etcdStartTimeout = 30 * time.Second

// embeddedEtcd is a running in-process etcd server.
type embeddedEtcd struct {
	etcd *embed.Etcd
	dir  string
	// ClientURL is where clients reach it (http://127.0.0.1:PORT).
	ClientURL string
}

// startEtcd starts an embedded etcd and waits until it serves. Close stops
// it and removes its data.
func startEtcd() (*embeddedEtcd, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rm-bench-etcd-")
	if err != nil {
		return nil, fmt.Errorf("etcd data dir: %w", err)
	}
	client := url.URL{Scheme: "http", Host: addrs[0]}
	peer := url.URL{Scheme: "http", Host: addrs[1]}
	cfg := embed.NewConfig()
	cfg.Name = "rm-bench"
	cfg.Dir = dir
	// etcd's own log would drown the progress output; its failures reach
	// us as errors from here and from the clients
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start embedded etcd: %w", err), os.RemoveAll(dir))
	}
	s := &embeddedEtcd{etcd: e, dir: dir, ClientURL: client.String()}
	select {
	case <-e.Server.ReadyNotify():
		return s, nil
	case err := <-e.Err():
		return nil, errors.Join(fmt.Errorf("embedded etcd: %w", err), s.Close())
	case <-time.After(etcdStartTimeout):
		return nil, errors.Join(fmt.Errorf("embedded etcd not ready within %s", etcdStartTimeout), s.Close())
	}
}

// Close stops the server and removes its data directory.
func (s *embeddedEtcd) Close() error {
	s.etcd.Close()
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove etcd data: %w", err)
	}
	return nil
}
