package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// check is one readiness condition; nil means ready.
type check func(ctx context.Context) error

// newHTTPHandler serves /metrics, /livez (the process is up), /readyz (every
// check passes), /healthz (an alias of /readyz, for the 2014 habit) and,
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
	ready := func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		failed := false
		body := ""
		for name, c := range checks {
			if err := c(ctx); err != nil {
				failed = true
				body += fmt.Sprintf("[-] %s: %v\n", name, err)
			} else {
				body += fmt.Sprintf("[+] %s\n", name)
			}
		}
		if failed {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = fmt.Fprint(w, body) // the client may have gone
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

// serveHTTP serves handler on ln until ctx ends, then shuts down within
// httpShutdownTimeout. Requests in progress get ctx as their base: they
// are cut when it ends, so that one waiting on an etcd that does not
// answer (a standby's status page, /readyz) does not hold the stop; every
// endpoint is read-only, so nothing is cut in half. It returns the error
// that stopped the server, if any.
func serveHTTP(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
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
