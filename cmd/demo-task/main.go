// Command demo-task is the demo workload that replication controllers run in
// tests, the lab and benchmarks: a small static HTTP server that can be told
// to crash or to turn unhealthy after a while, or run as a sidecar that
// probes another server.
//
//	task [--listen :8080] [--exit-after DURATION] [--unhealthy-after DURATION]
//	     [--unhealthy-at TIME] [--probe URL [--probe-interval DURATION]]
//	task healthcheck [URL]
//	task write PATH [TEXT]
//	task exists PATH
//
// It serves "/" (one line: hostname and uptime) and "/healthz" (200 "ok", or
// 503 once --unhealthy-after has passed, or from --unhealthy-at, an RFC 3339
// time, on if the task started before it: the tasks that run then turn
// unhealthy together, and their replacements are healthy). With --exit-after it exits with
// code 3 after that time, for crash-loop tests. With --probe it GETs URL
// every --probe-interval (default 1s), and /healthz answers 503 until a
// probe got 200 and whenever the last one did not: the sidecar of a task
// probes its first container on 127.0.0.1. The healthcheck mode GETs URL
// (default: /healthz on the port that PID 1, the task, was told to --listen
// on, http://127.0.0.1:8080/healthz without one) and exits 0 on 200, 1
// otherwise, so that an image built FROM scratch can still declare a
// HEALTHCHECK. The write and exists modes make and test a file, for init
// containers and the health checks that need their work (files.go). SIGTERM and SIGINT stop the server cleanly and promptly.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

const (
	defaultListen         = ":8080"
	defaultHealthcheckURL = "http://127.0.0.1:8080/healthz"
	// crashExitCode is the exit code of --exit-after.
	crashExitCode = 3
	// shutdownTimeout bounds the graceful shutdown; Docker's default stop
	// timeout is 10s, so this stays well below it.
	shutdownTimeout = 3 * time.Second
	// healthcheckTimeout stays below the image's HEALTHCHECK --timeout.
	healthcheckTimeout = 2 * time.Second
)

func main() {
	ctx, stop := signalContext(os.Stdout)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// signalNames are the stop signals the task heeds, by their names.
var signalNames = map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}

// signalContext is a context that ends at the first SIGINT or SIGTERM,
// which it logs on stdout with its time ("received SIGINT at <RFC 3339>"),
// so that a test can tell which signal stopped the task, and when.
func signalContext(stdout io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stdout, "received %s at %s\n", signalNames[s], time.Now().UTC().Format(time.RFC3339Nano))
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// exitError asks main to exit with a given code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode maps run's error to the process exit code, printing it first.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "task:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// run is the whole program; it returns when ctx is cancelled (nil), when
// --exit-after fires (an *exitError with code 3) or on an error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return healthcheck(ctx, args[1:], stderr)
		case "write":
			return writeFile(args[1:], stdout)
		case "exists":
			return fileExists(args[1:])
		}
	}

	fs := pflag.NewFlagSet("task", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", defaultListen, "address to serve HTTP on")
	exitAfter := fs.Duration("exit-after", 0, "exit with code 3 after this long (0: never)")
	unhealthyAfter := fs.Duration("unhealthy-after", 0, "answer /healthz with 503 after this long (0: never)")
	unhealthyAt := fs.String("unhealthy-at", "", "from this RFC 3339 time on, answer /healthz with 503 if the task started before it")
	stopDelay := fs.Duration("stop-delay", 0, "on SIGTERM, keep serving this long before shutting down, as a slow service does")
	probe := fs.String("probe", "", "GET this URL every --probe-interval; /healthz is 503 while the last probe did not get 200 (a sidecar)")
	probeInterval := fs.Duration("probe-interval", time.Second, "time between probes of --probe")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *probeInterval <= 0 {
		return fmt.Errorf("--probe-interval must be positive, got %s", *probeInterval)
	}
	sick := health{after: *unhealthyAfter}
	if *unhealthyAt != "" {
		at, err := time.Parse(time.RFC3339Nano, *unhealthyAt)
		if err != nil {
			return fmt.Errorf("--unhealthy-at: %w", err)
		}
		sick.at = at
	}
	return serve(ctx, *listen, *exitAfter, sick, *stopDelay, newProber(*probe, *probeInterval), stdout)
}

// health is when the task turns unhealthy: after running that long (0:
// never), or from a time on if it started before it (zero: never).
type health struct {
	after time.Duration
	at    time.Time
}

// sick reports whether a task started at start is unhealthy now.
func (h health) sick(start, now time.Time) bool {
	return h.after > 0 && now.Sub(start) >= h.after || !h.at.IsZero() && start.Before(h.at) && !now.Before(h.at)
}

// serve runs the HTTP server; p, when not nil, is probed in the background
// and decides /healthz.
func serve(ctx context.Context, addr string, exitAfter time.Duration, h health, stopDelay time.Duration, p *prober, stdout io.Writer) error {
	start := time.Now()
	hostname, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("hostname: %w", err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%s up %s\n", hostname, time.Since(start).Round(time.Second))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if h.sick(start, time.Now()) {
			http.Error(w, "unhealthy", http.StatusServiceUnavailable)
			return
		}
		if p != nil {
			if ok, why := p.healthy(); !ok {
				http.Error(w, "probe "+p.url+": "+why, http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	if p != nil {
		probeCtx, stopProbe := context.WithCancel(ctx)
		probed := make(chan struct{})
		go func() { defer close(probed); p.run(probeCtx, stdout) }()
		defer func() { stopProbe(); <-probed }()
	}

	var crash <-chan time.Time
	if exitAfter > 0 {
		timer := time.NewTimer(exitAfter)
		defer timer.Stop()
		crash = timer.C
	}

	var result error
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		fmt.Fprintln(stdout, "shutting down")
		time.Sleep(stopDelay)
	case <-crash:
		result = &exitError{code: crashExitCode, msg: fmt.Sprintf("exiting after %s as asked", exitAfter)}
	}

	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && result == nil {
		result = fmt.Errorf("shutdown: %w", err)
	}
	return result
}

// healthcheck GETs the URL and succeeds only on 200.
func healthcheck(ctx context.Context, args []string, stderr io.Writer) error {
	fs := pflag.NewFlagSet("task healthcheck", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var url string
	switch fs.NArg() {
	case 0:
		url = defaultHealthcheckURLNow()
	case 1:
		url = fs.Arg(0)
	default:
		return fmt.Errorf("healthcheck: want at most one URL, got %q", fs.Args())
	}

	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: %s", url, resp.Status)
	}
	return nil
}
