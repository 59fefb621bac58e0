package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/syncbuf"
)

// startServer runs the program with args plus a loopback listener and
// returns its base URL and the channel run's result arrives on.
func startServer(t *testing.T, ctx context.Context, args ...string) (string, <-chan error) {
	t.Helper()
	var stdout, stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...), &stdout, &stderr)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if line, ok := strings.CutPrefix(stdout.String(), "listening on "); ok {
			return "http://" + strings.TrimSpace(strings.SplitN(line, "\n", 2)[0]), done
		}
		select {
		case err := <-done:
			t.Fatalf("run returned before listening: %v (stderr %q)", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("server did not report its address; stdout %q", stdout.String())
	return "", nil
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func waitResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return within 5s")
		return nil
	}
}

func TestServeAnswersAndStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	base, done := startServer(t, ctx)

	code, body := get(t, base+"/")
	if code != http.StatusOK || !strings.Contains(body, " up ") {
		t.Errorf("GET /: got %d %q, want 200 and a line with hostname and uptime", code, body)
	}
	code, body = get(t, base+"/healthz")
	if code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz: got %d %q, want 200 \"ok\\n\"", code, body)
	}
	if code, _ := get(t, base+"/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: got %d, want 404", code)
	}

	cancel()
	if err := waitResult(t, done); err != nil {
		t.Errorf("run after cancel: got %v, want nil", err)
	}
}

func TestServeTurnsUnhealthy(t *testing.T) {
	base, _ := startServer(t, t.Context(), "--unhealthy-after", "50ms")
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := get(t, base+"/healthz")
		if code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz still %d after the deadline, want 503", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := healthcheck(t.Context(), []string{base + "/healthz"}, io.Discard); err == nil {
		t.Error("healthcheck of an unhealthy server: got nil, want an error")
	}
	if code, _ := get(t, base+"/"); code != http.StatusOK {
		t.Errorf("GET / while unhealthy: got %d, want 200", code)
	}
}

func TestServeExitsAfter(t *testing.T) {
	_, done := startServer(t, t.Context(), "--exit-after", "50ms")
	err := waitResult(t, done)
	if got := exitCode(err, io.Discard); got != crashExitCode {
		t.Errorf("exit code after --exit-after: got %d (err %v), want %d", got, err, crashExitCode)
	}
}

func TestHealthcheck(t *testing.T) {
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer healthy.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer sick.Close()

	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"healthy", []string{"healthcheck", healthy.URL}, 0},
		{"unhealthy", []string{"healthcheck", sick.URL}, 1},
		{"unreachable", []string{"healthcheck", "http://127.0.0.1:1/healthz"}, 1},
		{"two urls", []string{"healthcheck", healthy.URL, sick.URL}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args, io.Discard, io.Discard)
			if got := exitCode(err, io.Discard); got != tt.wantCode {
				t.Errorf("exit code: got %d (err %v), want %d", got, err, tt.wantCode)
			}
		})
	}
}

func TestRunRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"extra"}, {"--exit-after", "soon"}} {
		err := run(t.Context(), args, io.Discard, io.Discard)
		if err == nil {
			t.Errorf("run(%q): got nil, want an error", args)
		}
	}
	err := run(t.Context(), []string{"--help"}, io.Discard, io.Discard)
	if got := exitCode(err, io.Discard); got != 0 {
		t.Errorf("run --help: got exit code %d (err %v), want 0", got, err)
	}
}

func TestServeProbeDecidesHealth(t *testing.T) {
	var up atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer target.Close()
	base, _ := startServer(t, t.Context(), "--probe", target.URL, "--probe-interval", "10ms")

	waitHealth := func(want int) string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			code, body := get(t, base+"/healthz")
			if code == want {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("/healthz still %d %q after the deadline, want %d", code, body, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if body := waitHealth(http.StatusServiceUnavailable); !strings.Contains(body, target.URL) {
		t.Errorf("/healthz while the target fails: got %q, want the probed URL in it", body)
	}
	up.Store(true)
	waitHealth(http.StatusOK)
	up.Store(false)
	waitHealth(http.StatusServiceUnavailable)
	target.Close()
	waitHealth(http.StatusServiceUnavailable)
}

func TestRunRejectsABadProbeInterval(t *testing.T) {
	err := run(t.Context(), []string{"--probe", "http://127.0.0.1:1/", "--probe-interval", "0s"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--probe-interval") {
		t.Errorf("run with --probe-interval 0s: got %v, want an error naming the flag", err)
	}
}

func TestUnhealthyAtSickensOnlyTasksStartedBefore(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	h := health{at: at}
	for _, tt := range []struct {
		name       string
		start, now time.Time
		want       bool
	}{
		{"started before, before the time", at.Add(-time.Minute), at.Add(-time.Second), false},
		{"started before, at the time", at.Add(-time.Minute), at, true},
		{"started before, after the time", at.Add(-time.Minute), at.Add(time.Hour), true},
		{"started after: a replacement", at.Add(time.Second), at.Add(time.Hour), false},
	} {
		if got := h.sick(tt.start, tt.now); got != tt.want {
			t.Errorf("%s: sick = %v, want %v", tt.name, got, tt.want)
		}
	}
	if (health{}).sick(at, at.Add(time.Hour)) {
		t.Error("no --unhealthy-after nor --unhealthy-at: sick, want healthy")
	}
}

func TestServeTurnsUnhealthyAtATime(t *testing.T) {
	base, _ := startServer(t, t.Context(), "--unhealthy-at", time.Now().Add(100*time.Millisecond).UTC().Format(time.RFC3339Nano))
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := get(t, base+"/healthz")
		if code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz still %d after the deadline, want 503", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
