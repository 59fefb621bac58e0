package e2e

// The daemon's HTTP endpoints come before anything that can block: pointed
// at a Docker socket that does not exist, it still serves /livez at once
// and says on /readyz that Docker does not answer.

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestDaemonWithoutDockerServesLivezAtOnceAndReadyzNamesDocker(t *testing.T) {
	// not in parallel: it times how soon /livez answers, which the other
	// tests' daemons and containers would slow on a machine of 2 CPUs
	socket := "unix://" + filepath.Join(t.TempDir(), "no-such-docker.sock")
	metrics := etcdtest.FreeAddr(t)
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(filepath.Join(binDir, "replication-manager"),
		"--etcd-data-dir", filepath.Join(t.TempDir(), "etcd"),
		"--etcd-listen-client-urls", "http://"+etcdtest.FreeAddr(t),
		"--etcd-listen-peer-urls", "http://"+etcdtest.FreeAddr(t),
		"--metrics-bind-address", metrics,
		"--docker-host", socket)
	cmd.Stdout, cmd.Stderr = logs, logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon exit after SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("daemon did not stop within 30s of SIGTERM; killed: %v", <-done)
		}
		if t.Failed() {
			t.Logf("daemon logs:\n%s", logs.String())
		}
	})

	get := func(path string) (int, string, error) {
		resp, err := http.Get("http://" + metrics + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	testpoll.Until(t, 2*time.Second, "/livez 200 within 2s of the start", func() bool {
		code, _, err := get("/livez")
		return err == nil && code == http.StatusOK
	})
	t.Logf("/livez answered 200 %s after the start", time.Since(start).Round(time.Millisecond))
	// the embedded etcd comes up meanwhile; Docker never does
	var body string
	testpoll.Eventually(t, 30*time.Second, func() error {
		code, b, err := get("/readyz")
		body = b
		if err != nil {
			return err
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(b, "not ready: ") || !strings.Contains(b, "Docker at "+socket+" does not answer") {
			t.Fatalf("/readyz = %d:\n%s\nwant 503 naming Docker at %s", code, b, socket)
		}
		if !strings.Contains(b, "[+] etcd") {
			return fmt.Errorf("etcd not up yet:\n%s", b)
		}
		return nil
	})
	t.Logf("/readyz:\n%s", body)
	if code, b, err := get("/metrics"); err != nil || code != http.StatusOK || !strings.Contains(b, "go_goroutines") {
		t.Errorf("/metrics = %d %v, want 200 with the Go metrics", code, err)
	}
	if code, b, err := get("/"); err != nil || code != http.StatusOK || !strings.Contains(b, "starting") {
		t.Errorf("/ = %d %v, want 200 saying the manager is starting:\n%s", code, err, b)
	}
}
