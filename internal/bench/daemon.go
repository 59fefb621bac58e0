package bench

// This file runs the real daemon, bin/replication-manager, with its
// embedded etcd on free loopback ports and its data in a temporary
// directory, as a user would start it, and reads its /metrics.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
)

const (
	daemonStartTimeout = 60 * time.Second
	daemonStopTimeout  = 30 * time.Second
)

// daemon is a running replication-manager.
type daemon struct {
	cmd         *exec.Cmd
	done        chan error
	etcdURL     string
	metricsAddr string
	log         *os.File
	client      *clientv3.Client
	store       *registry.Store
}

// startDaemon runs the daemon with its default options but for the
// addresses and the data dir, logging to logPath, and waits until it leads
// and is ready.
func startDaemon(ctx context.Context, binDir, dataDir, logPath string) (*daemon, error) {
	addrs, err := freeAddrs(3)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("daemon log: %w", err)
	}
	d := &daemon{etcdURL: "http://" + addrs[0], metricsAddr: addrs[2], log: logFile, done: make(chan error, 1)}
	d.cmd = exec.Command(filepath.Join(binDir, "replication-manager"),
		"--etcd-data-dir", dataDir,
		"--etcd-listen-client-urls", d.etcdURL,
		"--etcd-listen-peer-urls", "http://"+addrs[1],
		"--metrics-bind-address", d.metricsAddr,
	)
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	if err := d.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	go func() { d.done <- d.cmd.Wait() }()

	if err := d.waitReady(ctx); err != nil {
		return nil, errors.Join(err, d.stop())
	}
	d.client, err = clientv3.New(clientv3.Config{Endpoints: []string{d.etcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("etcd client: %w", err), d.stop())
	}
	d.store = registry.NewStore(d.client, "")
	return d, nil
}

// waitReady waits until /readyz passes and the daemon leads.
func (d *daemon) waitReady(ctx context.Context) error {
	waitCtx, exited := context.WithCancel(ctx)
	defer exited()
	_, err := testpoll.Wait(waitCtx, daemonStartTimeout, func() error {
		select {
		case err := <-d.done:
			d.done <- err
			exited() // no use waiting longer
			return fmt.Errorf("daemon exited: %w", err)
		default:
		}
		if err := d.get(ctx, "/readyz", nil); err != nil {
			return err
		}
		text, err := d.metrics(ctx)
		if err != nil {
			return err
		}
		if v, ok := metricValue(text, "replication_manager_is_leader", nil); !ok || v != 1 {
			return errors.New("not leading yet")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("daemon not ready: %w (see %s)", err, d.log.Name())
	}
	return nil
}

// get fetches a path of the metrics address; a status other than 200 is an
// error. The body goes to w when it is not nil.
func (d *daemon) get(ctx context.Context, path string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.metricsAddr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("daemon %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("daemon %s: %s", path, resp.Status)
	}
	if w == nil {
		w = io.Discard
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("daemon %s: %w", path, err)
	}
	return nil
}

// metrics returns the daemon's /metrics text.
func (d *daemon) metrics(ctx context.Context) (string, error) {
	var b bytes.Buffer
	if err := d.get(ctx, "/metrics", &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// stop sends SIGTERM and waits for a clean exit; after daemonStopTimeout it
// kills the daemon. The daemon leaves its containers running: the caller
// removes them.
func (d *daemon) stop() error {
	if d.client != nil {
		d.client.Close()
	}
	defer d.log.Close()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop daemon: %w", err)
	}
	select {
	case err := <-d.done:
		if err != nil {
			return fmt.Errorf("daemon exit after SIGTERM: %w (see %s)", err, d.log.Name())
		}
		return nil
	case <-time.After(daemonStopTimeout):
		_ = d.cmd.Process.Kill()
		return fmt.Errorf("daemon did not stop within %s of SIGTERM; killed (%w)", daemonStopTimeout, <-d.done)
	}
}

// freeAddrs returns n loopback addresses whose ports were free a moment
// ago, all different.
func freeAddrs(n int) ([]string, error) {
	var out []string
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}
