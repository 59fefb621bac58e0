package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// check is one readiness condition; nil means ready.
type check func(ctx context.Context) error

// checkError is a check's failure: what is wrong, in words that /readyz's
// summary line gives, and the error that tells why, for its own line.
type checkError struct {
	what string
	err  error
}

func (e *checkError) Error() string {
	if e.err == nil {
		return e.what
	}
	return e.what + ": " + e.err.Error()
}

func (e *checkError) Unwrap() error { return e.err }

// shortReason is what /readyz's summary line says of a failed check.
func shortReason(err error) string {
	if ce, ok := errors.AsType[*checkError](err); ok {
		return ce.what
	}
	return err.Error()
}

// newHTTPHandler serves /metrics, /livez (the process is up), /readyz (every
// check passes: one line per check in name order, then "ok", or "not
// ready:" and what failed, with 503), /healthz (an alias of /readyz, for the 2014 habit) and,
// when page is not nil, the status page (ui.go). Every endpoint is
// read-only: a method other than GET or HEAD gets 405.
func newHTTPHandler(gatherer prometheus.Gatherer, checks map[string]check, page *statusPage) http.Handler {
	mux := http.NewServeMux()
	if page != nil {
		page.register(mux)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	names := slices.Sorted(maps.Keys(checks))
	ready := func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		var body strings.Builder
		var failed []string
		for _, name := range names {
			if err := checks[name](ctx); err != nil {
				failed = append(failed, shortReason(err))
				fmt.Fprintf(&body, "[-] %s: %v\n", name, err)
			} else {
				fmt.Fprintf(&body, "[+] %s\n", name)
			}
		}
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(&body, "not ready: %s\n", strings.Join(failed, "; "))
		} else {
			body.WriteString("ok\n")
		}
		_, _ = fmt.Fprint(w, body.String()) // the client may have gone
	}
	mux.HandleFunc("/readyz", ready)
	mux.HandleFunc("/healthz", ready)
	return readOnly(mux)
}

// readOnly refuses every method but GET and HEAD: nothing served here
// changes anything.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: this server is read-only", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// allowedHosts are the host names a request's Host header may name: the
// host of the listen address bindAddr as given, that of ln's address (the
// one bound), the loopback names and extra (--http-allowed-hosts). On an
// unspecified address (0.0.0.0, ::), the machine's own name is one too.
// Names are lower case, without port or brackets.
func allowedHosts(bindAddr string, bound net.Addr, extra []string) map[string]bool {
	hosts := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	add := func(h string) {
		if h = hostOnly(h); h != "" {
			hosts[h] = true
		}
	}
	if bound != nil {
		add(bound.String())
	}
	add(bindAddr)
	for _, h := range extra {
		add(h)
	}
	host, _, err := net.SplitHostPort(bindAddr)
	if ip := net.ParseIP(host); err == nil && (host == "" || ip != nil && ip.IsUnspecified()) {
		if name, err := os.Hostname(); err == nil {
			add(name)
		}
	}
	// not names of this host: some browsers let a page of any site reach
	// the loopback through 0.0.0.0
	delete(hosts, "0.0.0.0")
	delete(hosts, "::")
	return hosts
}

// hostOnly is the host of a Host header or listen address, lower case,
// without its port and without the brackets of an IPv6 address.
func hostOnly(hostport string) string {
	host := strings.TrimSpace(hostport)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(host)
}

// checkHost answers 421 Misdirected Request to a request whose Host header
// is not one of hosts (allowedHosts), and logs it: a page of another site
// that the browser reaches through DNS rebinding names that site, and must
// not read the status page or the metrics.
func checkHost(h http.Handler, hosts map[string]bool, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host := hostOnly(r.Host); !hosts[host] && !isAddressLiteral(host) {
			logger.Warn("http: refused a request for another host; --http-allowed-hosts adds host names",
				"host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, fmt.Sprintf("misdirected request: this server does not answer for host %q", r.Host), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isAddressLiteral reports whether host is an IP address other than an
// unspecified one. A DNS rebinding attack needs a name it controls in the
// Host header; a request for an address was sent to that address, as a
// Prometheus that scrapes 10.0.0.5:10252 sends it, and the browser's
// same-origin rule keeps other sites' pages from reading its answers.
// 0.0.0.0 and :: are not this host's addresses: some browsers let any
// site's page reach the loopback through them.
func isAddressLiteral(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && !ip.IsUnspecified()
}

// The HTTP server's timeouts. Nothing served streams: a request is a GET
// with no body, and an answer (the status page, /metrics, /readyz, which
// gives its checks 2s; the status page, which gives its etcd reads
// uiReadTimeout) is written at once, so that a client that sends or
// reads slower than this only holds a connection.
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpReadTimeout       = 10 * time.Second
	httpWriteTimeout      = 30 * time.Second
	httpIdleTimeout       = 2 * time.Minute
)

// newHTTPServer is the server serveHTTP runs: handler, with ctx as the
// base of every request, and every timeout set, so that slow or idle
// clients cannot hold connections open.
func newHTTPServer(ctx context.Context, handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       httpIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}

// serveHTTP serves handler on ln until ctx ends, then shuts down within
// httpShutdownTimeout. Requests in progress get ctx as their base: they
// are cut when it ends, so that one waiting on an etcd that does not
// answer (a standby's status page, /readyz) does not hold the stop; every
// endpoint is read-only, so nothing is cut in half. It returns the error
// that stopped the server, if any.
func serveHTTP(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := newHTTPServer(ctx, handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close() // cut what is left, so that no handler outlives serve
		return fmt.Errorf("http server shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
