package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHealthcheckProbesThePortTheTaskListensOn(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cmdline string
		want    string
	}{
		{"no --listen: the default port", "/task\x00", "http://127.0.0.1:8080/healthz"},
		{"--listen :8081", "/task\x00--listen\x00:8081\x00", "http://127.0.0.1:8081/healthz"},
		{"--listen=:9000", "/task\x00--listen=:9000\x00", "http://127.0.0.1:9000/healthz"},
		{"every address", "/task\x00--listen\x000.0.0.0:8082\x00", "http://127.0.0.1:8082/healthz"},
		{"every IPv6 address", "/task\x00--listen\x00[::]:8083\x00", "http://127.0.0.1:8083/healthz"},
		{"one address", "/task\x00--listen\x0010.0.0.5:8084\x00", "http://10.0.0.5:8084/healthz"},
		{"under docker-init", "/sbin/docker-init\x00--\x00/task\x00--listen\x00:8085\x00", "http://127.0.0.1:8085/healthz"},
		{"a sidecar's own port, not the one it probes", "/task\x00--listen\x00:8081\x00--probe\x00http://127.0.0.1:8080/healthz\x00", "http://127.0.0.1:8081/healthz"},
		{"the last --listen wins", "/task\x00--listen\x00:1\x00--listen\x00:8086\x00", "http://127.0.0.1:8086/healthz"},
		{"a bad address: the default", "/task\x00--listen\x00nonsense\x00", "http://127.0.0.1:8080/healthz"},
		{"--listen without a value: the default", "/task\x00--listen\x00", "http://127.0.0.1:8080/healthz"},
	} {
		if got := healthcheckURLOf([]byte(tt.cmdline)); got != tt.want {
			t.Errorf("%s: healthcheckURLOf(%q) = %q, want %q", tt.name, tt.cmdline, got, tt.want)
		}
	}
}

// TestHealthcheckWithoutAURLReadsPID1sListen runs the healthcheck mode as
// the image's HEALTHCHECK does, with no URL, against a server on a port
// other than 8080 that PID 1's command line names.
func TestHealthcheckWithoutAURLReadsPID1sListen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	cmdline := filepath.Join(t.TempDir(), "cmdline")
	if err := os.WriteFile(cmdline, []byte("/task\x00--listen\x00:"+port+"\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	was := pid1Cmdline
	pid1Cmdline = cmdline
	t.Cleanup(func() { pid1Cmdline = was })

	if err := run(t.Context(), []string{"healthcheck"}, io.Discard, io.Discard); err != nil {
		t.Errorf("healthcheck of a healthy task on :%s: %v", port, err)
	}
}
