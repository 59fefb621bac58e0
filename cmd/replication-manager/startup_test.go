package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
)

// A daemon whose Docker socket does not exist serves /livez at once, says
// on /readyz that Docker does not answer, in sorted lines, and serves
// /metrics and the page while the engine's docker info waits; a stop ends
// it as usual.
func TestDaemonServesHTTPWhileDockerDoesNotAnswer(t *testing.T) {
	t.Parallel()
	socket := "unix://" + filepath.Join(t.TempDir(), "no-such-docker.sock")
	metrics := freeLoopbackAddr(t)
	base := "http://" + metrics
	logs := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- runWith(ctx, []string{
			"--etcd-data-dir=" + t.TempDir(),
			"--etcd-listen-client-urls=http://" + etcdtest.FreeAddr(t),
			"--etcd-listen-peer-urls=http://" + etcdtest.FreeAddr(t),
			"--metrics-bind-address=" + metrics,
			"--docker-host=" + socket,
		}, io.Discard, logs, dialDocker)
	}()
	defer func() {
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", logs)
		}
	}()

	took := waitForHTTP(t, base+"/livez", http.StatusOK, 2*time.Second)
	t.Logf("/livez answered 200 %s after the start (%s of polling)", time.Since(start).Round(time.Millisecond), took.Round(time.Millisecond))
	if since := time.Since(start); since > 2*time.Second {
		t.Errorf("/livez answered %s after the start, want within 2s", since)
	}
	code, body, err := getHTTP(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready: ") ||
		!strings.Contains(body, "[-] docker: Docker at "+socket+" does not answer") {
		t.Errorf("/readyz = %d:\n%s\nwant 503 saying Docker at %s does not answer", code, body, socket)
	}
	t.Logf("/readyz:\n%s", body)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "[") {
			name, _, _ := strings.Cut(line[4:], ":")
			names = append(names, name)
		}
	}
	if !slices.IsSorted(names) || len(names) != 3 {
		t.Errorf("/readyz checks %q, want the three in name order", names)
	}
	expectHTTP(t, base+"/metrics", http.StatusOK, "go_goroutines")
	// the page says the controllers cannot be read, or lists them from
	// etcd once the embedded etcd is up: either way it answers
	waitForHTTP(t, base+"/api/v1/controllers", http.StatusOK, waitTimeout)
	expectHTTP(t, base+"/", http.StatusOK, "starting")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after its context ended, want nil", err)
		}
	case <-time.After(stopDeadline):
		t.Fatalf("run did not return within %s after its context ended", stopDeadline)
	}
}
