package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/internal/syncbuf"
)

// hostCheckServer serves the daemon's handler as serve wraps it, bound to
// 127.0.0.1 but given bindAddr as --metrics-bind-address, with extra as
// --http-allowed-hosts. It returns the server and its log.
func hostCheckServer(t *testing.T, bindAddr string, extra ...string) (*httptest.Server, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = checkHost(newHTTPHandler(prometheus.NewRegistry(), nil, nil),
		allowedHosts(bindAddr, srv.Listener.Addr(), extra), logger)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, logs
}

// getHost does GET path on srv with host as the Host header.
func getHost(t *testing.T, srv *httptest.Server, host, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s with Host %s: %v", path, host, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s with Host %s: %v", path, host, err)
	}
	return resp.StatusCode, string(body)
}

func TestHTTPRefusesHostsItDoesNotServeAgainstDNSRebinding(t *testing.T) {
	srv, logs := hostCheckServer(t, "127.0.0.1:10252", "rm.example.net", "Other.Example.ORG")
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost:" + port, "LOCALHOST", "127.0.0.1:" + port, "[::1]:" + port, "[::1]",
		"rm.example.net:" + port, "RM.example.net", "other.example.org",
		"10.0.0.5:" + port, "[fd00::5]:" + port} { // addresses cannot be rebound: a scrape by IP is served
		if code, body := getHost(t, srv, host, "/livez"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET /livez with Host %s = %d %q, want 200 ok", host, code, body)
		}
	}
	for _, host := range []string{"evil.example", "evil.example:" + port, "localhost.evil.example", "rm.example.net.evil.example", "0.0.0.0:" + port, "[::]:" + port} {
		for _, path := range []string{"/livez", "/metrics", "/readyz", "/"} {
			code, body := getHost(t, srv, host, path)
			if code != http.StatusMisdirectedRequest || !strings.Contains(body, "misdirected request") {
				t.Errorf("GET %s with Host %s = %d %q, want 421 misdirected request", path, host, code, body)
			}
		}
	}
	if got := strings.Count(logs.String(), "level=WARN"); got != 6*4 {
		t.Errorf("%d warnings for 24 refused requests, want one each; log:\n%s", got, logs)
	}
	if !strings.Contains(logs.String(), "host=evil.example:"+port) {
		t.Errorf("the warning does not name the host; log:\n%s", logs)
	}
}

func TestHTTPOnAnUnspecifiedAddressAlsoServesTheMachinesName(t *testing.T) {
	name, err := os.Hostname()
	if err != nil || name == "" || strings.EqualFold(name, "localhost") {
		t.Skipf("no host name of its own to try (%q, %v)", name, err)
	}
	for _, bind := range []string{"0.0.0.0:10252", "[::]:10252", ":10252"} {
		srv, _ := hostCheckServer(t, bind)
		if code, _ := getHost(t, srv, name, "/livez"); code != http.StatusOK {
			t.Errorf("bound to %s: GET /livez with Host %s = %d, want 200", bind, name, code)
		}
	}
	srv, _ := hostCheckServer(t, "127.0.0.1:10252")
	if code, _ := getHost(t, srv, name, "/livez"); code != http.StatusMisdirectedRequest {
		t.Errorf("bound to 127.0.0.1: GET /livez with Host %s = %d, want 421", name, code)
	}
}

func TestHTTPServesTheHostOfTheListenAddress(t *testing.T) {
	srv, _ := hostCheckServer(t, "status.internal:10252")
	if code, _ := getHost(t, srv, "Status.Internal:10252", "/livez"); code != http.StatusOK {
		t.Errorf("GET /livez with the listen address's host = %d, want 200", code)
	}
}

func TestValidateRefusesAllowedHostsWithAPort(t *testing.T) {
	for _, bad := range []string{"rm.example.net:80", "", "http://rm.example.net", "[::1]:80"} {
		opts := newOptions()
		opts.HTTPAllowedHosts = []string{"ok.example", bad}
		if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), "--http-allowed-hosts") {
			t.Errorf("--http-allowed-hosts ok.example,%q: Validate = %v, want an error naming the flag", bad, err)
		}
	}
	opts := newOptions()
	opts.HTTPAllowedHosts = []string{"rm.example.net", "10.0.0.7", "fe80::1", "[fe80::2]"}
	if err := opts.Validate(); err != nil {
		t.Errorf("Validate = %v, want host names and addresses taken", err)
	}
}

func TestHTTPServerSetsEveryTimeout(t *testing.T) {
	srv := newHTTPServer(t.Context(), http.NotFoundHandler())
	for name, got := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout,
	} {
		if got <= 0 {
			t.Errorf("%s = %s, want a positive timeout", name, got)
		}
	}
	// a /readyz or a status page that waits its whole time on etcd still
	// gets its answer out
	if srv.WriteTimeout <= uiReadTimeout || srv.ReadTimeout < srv.ReadHeaderTimeout {
		t.Errorf("WriteTimeout %s, ReadTimeout %s, ReadHeaderTimeout %s: want writes above the status page's %s and reads at least the header's",
			srv.WriteTimeout, srv.ReadTimeout, srv.ReadHeaderTimeout, uiReadTimeout)
	}
	if srv.BaseContext(nil) != t.Context() {
		t.Error("BaseContext is not ctx: requests would outlive the stop")
	}
}
