// Package registrytest runs a real image registry for tests: the
// distribution registry (github.com/distribution/distribution/v3, the one
// Docker Hub runs), built from its module and started on 127.0.0.1 with
// filesystem storage in a temporary directory and, if asked, an htpasswd
// user. The Docker Engine trusts registries on 127.0.0.0/8 without TLS, so
// `docker push 127.0.0.1:PORT/...` works with no engine configuration.
// Nothing reaches the internet: every image a test pushes is built here.
package registrytest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Module is the registry's main package and version, as `go install`
// takes it; `make registry` builds the same one.
const Module = "github.com/distribution/distribution/v3/cmd/registry@v3.1.2"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BinaryEnv names a registry binary built already: make test builds one
// before the tests start (make registry-bin) and names it here.
const BinaryEnv = "RM_TEST_REGISTRY"

// Binary returns the path of the registry's binary: the one BinaryEnv
// names, or else one it builds once per process into the user's cache
// directory (kept between runs: the first build downloads the module).
func Binary(ctx context.Context) (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinaryEnv, bin, err)
		}
		return bin, nil
	}
	buildOnce.Do(func() { buildPath, buildErr = build(ctx) })
	return buildPath, buildErr
}

func build(ctx context.Context) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	version := Module[strings.LastIndex(Module, "@")+1:]
	dir := filepath.Join(cache, "replication-manager", "registry-"+version)
	bin := filepath.Join(dir, "registry")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// go install into a directory of our own, then rename: another test
	// binary building at the same time never sees half a file
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("registry build dir: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("registry build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "install", Module)
	cmd.Dir = tmp // outside this module: go install pkg@version ignores go.mod anyway
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", Module, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "registry"), bin); err != nil {
		return "", fmt.Errorf("registry binary: %w", err)
	}
	return bin, nil
}

// Options configure Start.
type Options struct {
	// User and Password, when User is set, make the registry ask for
	// them (htpasswd, bcrypt) on every request.
	User, Password string
}

// Registry is a running registry.
type Registry struct {
	// Host is 127.0.0.1:PORT, the registry part of an image reference.
	Host string
	// bin and config are the binary and configuration file it runs.
	bin, config string
	cmd         *exec.Cmd
	done        chan struct{}
	log         *lockedBuffer
}

// Start builds the registry if needed and starts it on a free port of
// 127.0.0.1, with its storage in a temporary directory; the test's
// cleanup stops it, and the directory goes with every blob pushed to it.
// A machine without Go's module proxy, or the test's deadline, fails the
// test.
func Start(tb testing.TB, opts Options) *Registry {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tb.Context()), 10*time.Minute)
	defer cancel()
	r, err := Serve(ctx, tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("registry: %v", err)
	}
	tb.Cleanup(func() {
		if err := r.Stop(); err != nil {
			tb.Errorf("registry: %v", err)
		}
	})
	return r
}

// Serve is Start for a program (the side-by-side of `make bench-docker`):
// it builds the registry if needed and starts it on a free port of
// 127.0.0.1 with its storage under dir (made if need be). The caller stops it, and removing
// dir removes every blob pushed to it.
func Serve(ctx context.Context, dir string, opts Options) (*Registry, error) {
	bin, err := Binary(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("registry dir: %w", err)
	}
	return start(bin, dir, opts)
}

func start(bin, dir string, opts Options) (*Registry, error) {
	storage := filepath.Join(dir, "storage")
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: 127.0.0.1:0
`, storage)
	if opts.User != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(opts.Password), bcrypt.MinCost)
		if err != nil {
			return nil, fmt.Errorf("htpasswd: %w", err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(opts.User+":"+string(hash)+"\n"), 0o600); err != nil {
			return nil, err
		}
		config += fmt.Sprintf("auth:\n  htpasswd:\n    realm: registrytest\n    path: %s\n", htpasswd)
	}
	var lastErr error
	for range 5 { // a port found free may be taken before the registry binds it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		host := fmt.Sprintf("127.0.0.1:%d", port)
		path := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(path, []byte(strings.Replace(config, "127.0.0.1:0", host, 1)), 0o600); err != nil {
			return nil, err
		}
		r := &Registry{Host: host, bin: bin, config: path, done: make(chan struct{}), log: &lockedBuffer{}}
		r.cmd = exec.Command(bin, "serve", path)
		r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
		if err := r.cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", bin, err)
		}
		go func() { _ = r.cmd.Wait(); close(r.done) }()
		if lastErr = r.ready(30 * time.Second); lastErr == nil {
			return r, nil
		}
		_ = r.Stop()
	}
	return nil, lastErr
}

// ready waits until the registry answers on /v2/ (200, or 401 with a
// user).
func (r *Registry) ready(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			return fmt.Errorf("registry on %s exited: %s", r.Host, r.log.String())
		default:
		}
		resp, err := client.Get("http://" + r.Host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("registry on %s not ready after %s: %s", r.Host, timeout, r.log.String())
}

// Stop ends the registry and waits for it.
func (r *Registry) Stop() error {
	select {
	case <-r.done:
		return nil
	default:
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop registry on %s: %w", r.Host, err)
	}
	<-r.done
	return nil
}

// AlsoIn starts a second instance of the registry in the network
// namespace netns (as `ip netns` names it; dockertest.Engine.Netns), on the
// same address, with the same storage and users: an engine in that
// namespace pulls the same images by the same references, as a second host
// would from a shared registry. The test's cleanup stops it. Needs root
// and nsenter.
func (r *Registry) AlsoIn(tb testing.TB, netns string) {
	tb.Helper()
	log := &lockedBuffer{}
	cmd := exec.Command("nsenter", "--net=/var/run/netns/"+netns, r.bin, "serve", r.config)
	cmd.Env = append(os.Environ(), "REGISTRY_LOG_LEVEL=info") // it says when it listens
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		tb.Fatalf("registry in %s: %v", netns, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "listening on "+r.Host) {
		select {
		case <-done:
			tb.Fatalf("registry in %s exited: %s", netns, log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("registry in %s not listening after 30s: %s", netns, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ref returns the reference of repo:tag in this registry.
func (r *Registry) Ref(repoTag string) string { return r.Host + "/" + repoTag }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer collects the registry's output for an error message.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
