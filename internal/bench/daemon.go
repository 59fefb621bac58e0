package bench

// This file runs the real daemon, bin/replication-manager, with its
// embedded etcd on free loopback ports and its data in a temporary
// directory, as a user would start it, and reads its /metrics in the
// Prometheus text format, with the format's own parser.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
		if err := d.get(ctx, "/readyz", io.Discard); err != nil {
			return err
		}
		leading, err := d.metrics(ctx, "replication_manager_is_leader", "", nil)
		if err == nil && leading[""] != 1 {
			err = errors.New("not leading yet")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("daemon not ready: %w (see %s)", err, d.log.Name())
	}
	return nil
}

// get fetches a path of the metrics address into w; a status other than
// 200 is an error.
func (d *daemon) get(ctx context.Context, path string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.metricsAddr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = errors.New(resp.Status)
		} else {
			_, err = io.Copy(w, resp.Body)
		}
	}
	if err != nil {
		return fmt.Errorf("daemon %s: %w", path, err)
	}
	return nil
}

// metrics sums the samples of the daemon's metric name by the value of
// their label by, of those whose labels include every pair of want.
func (d *daemon) metrics(ctx context.Context, name, by string, want map[string]string) (map[string]float64, error) {
	var text strings.Builder
	if err := d.get(ctx, "/metrics", &text); err != nil {
		return nil, err
	}
	return sumMetric(text.String(), name, by, want)
}

// calls are the daemon's Docker API calls so far, by operation.
func (d *daemon) calls(ctx context.Context) (map[string]float64, error) {
	return d.metrics(ctx, "replication_manager_docker_calls_total", "operation", nil)
}

// sumMetric sums the samples of metric name in the text format, of those
// whose labels include every pair of want, by the value of their label by
// ("" for every one).
func sumMetric(text, name, by string, want map[string]string) (map[string]float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	out := make(map[string]float64)
	for _, m := range families[name].GetMetric() {
		labels := make(map[string]string)
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		matches := true
		for k, v := range want {
			matches = matches && labels[k] == v
		}
		if matches { // a sample is a counter, a gauge or untyped: the other two read 0
			out[labels[by]] += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
		}
	}
	return out, nil
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
