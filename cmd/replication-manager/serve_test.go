package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/tcpproxy"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// The daemon's serve, on an external etcd the test stops and starts again
// on the same data dir, behind a proxy whose address stays (the port etcd
// let go may be another test's by then), and on the fake task control:
// /readyz follows etcd, /livez never does, and leadership comes back with
// etcd.
func TestReadyzTurnsFalseWhileEtcdIsAwayAndLivezStaysTrue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := etcdtest.New(dir, fastElection)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(srv.Close)
	proxy := tcpproxy.New(t, strings.TrimPrefix(srv.ClientURL, "http://"))

	opts := newOptions()
	opts.EtcdServers = []string{"http://" + proxy.Addr()}
	opts.EtcdDialTimeout = 2 * time.Second
	opts.MetricsBindAddress = freeLoopbackAddr(t)
	opts.LeaderElectLeaseDuration = 2 * time.Second
	opts.LeaderElectIdentity = "serve-test"
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, opts, logger, &taskcontrol.Fake{}) }()
	defer func() {
		if t.Failed() {
			t.Logf("serve's log:\n%s", logs)
		}
	}()
	base := "http://" + opts.MetricsBindAddress

	// a standby is ready too: wait until this one leads, then until its
	// manager has listed the controllers
	waitForMetric(t, base, "replication_manager_is_leader 1")
	waitForHTTP(t, base+"/readyz", http.StatusOK, 20*time.Second)
	expectHTTP(t, base+"/livez", http.StatusOK, "ok")
	expectHTTP(t, base+"/healthz", http.StatusOK, "[+] etcd")
	expectHostRefused(t, base+"/livez", "evil.example")

	srv.Close()
	took := waitForHTTP(t, base+"/readyz", http.StatusServiceUnavailable, 10*time.Second)
	t.Logf("/readyz turned 503 %s after etcd stopped", took.Round(time.Millisecond))
	expectHTTP(t, base+"/readyz", http.StatusServiceUnavailable, "[-] etcd")
	expectHTTP(t, base+"/healthz", http.StatusServiceUnavailable, "[-] etcd")
	expectHTTP(t, base+"/livez", http.StatusOK, "ok")
	waitForMetric(t, base, "replication_manager_is_leader 0") // the session expired

	again, err := etcdtest.New(dir, fastElection)
	if err != nil {
		t.Fatalf("start etcd again on the same data dir: %v", err)
	}
	t.Cleanup(again.Close)
	proxy.Retarget(strings.TrimPrefix(again.ClientURL, "http://"))
	took = waitForHTTP(t, base+"/readyz", http.StatusOK, 30*time.Second)
	t.Logf("/readyz turned 200 %s after etcd came back", took.Round(time.Millisecond))
	expectHTTP(t, base+"/livez", http.StatusOK, "ok")
	waitForMetric(t, base, "replication_manager_is_leader 1")

	stop() // as SIGTERM does through signal.NotifyContext
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after ctx ended, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return within 20s after ctx ended")
	}
	if resp, err := http.Get(base + "/livez"); err == nil {
		_ = resp.Body.Close()
		t.Error("the metrics endpoint still answers after serve returned")
	}
}

// fastElection lets a single-member test etcd elect itself in tens of
// milliseconds.
func fastElection(cfg *embed.Config) {
	cfg.TickMs, cfg.ElectionMs = 10, 100
}

// freeLoopbackAddr returns a loopback address whose port was free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// waitTimeout bounds every wait of the package's tests.
const waitTimeout = 20 * time.Second

// getHTTP returns the status and body of a GET.
func getHTTP(url string) (int, string, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// waitForHTTP polls url until it answers with code, and returns how long
// that took.
func waitForHTTP(t *testing.T, url string, code int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got, body, err := getHTTP(url)
		if err == nil && got == code {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("GET %s: still %d %q (%v) after %s, want %d", url, got, body, err, timeout, code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectHTTP checks one GET of url: its code, and that its body contains
// want.
func expectHTTP(t *testing.T, url string, code int, want string) {
	t.Helper()
	got, body, err := getHTTP(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if got != code || !strings.Contains(body, want) {
		t.Errorf("GET %s = %d %q, want %d with %q", url, got, body, code, want)
	}
}

// waitForMetric polls /metrics until a line equals line.
func waitForMetric(t *testing.T, base, line string) {
	t.Helper()
	testpoll.Until(t, waitTimeout, fmt.Sprintf("%q in /metrics", line), func() bool {
		code, body, err := getHTTP(base + "/metrics")
		if err != nil || code != http.StatusOK {
			return false
		}
		for _, l := range strings.Split(body, "\n") {
			if l == line {
				return true
			}
		}
		return false
	})
}

// expectHostRefused checks that GET url with host as the Host header gets
// 421: serve wraps its handler in checkHost.
func expectHostRefused(t *testing.T, url, host string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s with Host %s: %v", url, host, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("GET %s with Host %s = %d, want 421", url, host, resp.StatusCode)
	}
}
