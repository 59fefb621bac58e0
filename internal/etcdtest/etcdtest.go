// Package etcdtest starts a real, embedded etcd server for tests, on
// loopback ports chosen by the kernel and a data dir of the test's.
package etcdtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/replication-manager/replication-manager/internal/etcdembed"
)

// Server is a running embedded etcd, or one another process runs (Dial).
type Server struct {
	Etcd *embed.Etcd // nil for a server of another process
	// ClientURL is the first advertised client URL, after the options.
	ClientURL string
	dir       string
	ownsDir   bool
	closeOnce sync.Once
}

// Start runs an embedded etcd in t.TempDir() until the test ends. Options
// may adjust the configuration before it starts (auth, TLS, ...).
func Start(tb testing.TB, opts ...func(*embed.Config)) *Server {
	tb.Helper()
	s, err := New(tb.TempDir(), opts...)
	if err != nil {
		tb.Fatalf("start embedded etcd: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// New runs an embedded etcd with its data in dir; an empty dir makes a
// temporary one that Close removes. Use it where one server outlives a
// test, as in TestMain.
func New(dir string, opts ...func(*embed.Config)) (*Server, error) {
	ownsDir := false
	if dir == "" {
		d, err := os.MkdirTemp("", "etcdtest-")
		if err != nil {
			return nil, err
		}
		dir, ownsDir = d, true
	}
	var e *embed.Etcd
	var cfg *embed.Config
	for try := 1; ; try++ {
		var err error
		if cfg, err = config(dir, opts); err != nil {
			return nil, err
		}
		e, err = embed.StartEtcd(cfg)
		if err == nil {
			break
		}
		// a port drawn free a moment ago may have been bound since by
		// another process's server: draw again (etcd binds its listeners
		// before it touches the data dir)
		if !errors.Is(err, syscall.EADDRINUSE) || try == startTries {
			return nil, err
		}
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready within 30s")
	}
	// the options may have moved the client URL (to https, to a fixed port)
	return &Server{Etcd: e, ClientURL: cfg.AdvertiseClientUrls[0].String(), dir: dir, ownsDir: ownsDir}, nil
}

// startTries is how many times New draws ports for a server whose
// listener found its port taken.
const startTries = 5

// config is the configuration of a server with its data in dir, on ports
// drawn now, with opts applied.
func config(dir string, opts []func(*embed.Config)) (*embed.Config, error) {
	clientAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	peerAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	clientURL := url.URL{Scheme: "http", Host: clientAddr}
	peerURL := url.URL{Scheme: "http", Host: peerAddr}

	cfg := embed.NewConfig()
	etcdembed.Configure(cfg) // the daemon's settings
	cfg.Name = "test"
	cfg.Dir = dir
	// etcd's own logs would drown the test output; failures surface as
	// errors from New and from the client.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peerURL.String())
	// the cheapest password hashing bcrypt allows: under the race detector
	// the default cost takes seconds per login, and the tests that enable
	// auth log in many times at once
	cfg.BcryptCost = uint(bcrypt.MinCost)
	for _, o := range opts {
		o(cfg)
	}
	return cfg, nil
}

// Close stops the server and removes a data dir New made. A test may
// close a server early, to see what happens while etcd is away: the
// cleanup's Close then does nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if s.Etcd == nil {
			return
		}
		s.Etcd.Close()
		if s.ownsDir {
			_ = os.RemoveAll(s.dir)
		}
	})
}

// Dial is the server at clientURL that another process runs (a benchmark
// that measures a child process's memory lends it its etcd): Client works,
// Close does nothing.
func Dial(clientURL string) *Server {
	return &Server{ClientURL: clientURL}
}

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *clientv3.Client {
	tb.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		tb.Fatalf("etcd client: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// RolesClient returns the client the daemon's roles have on the etcd it
// embeds: one that calls the server in this process (etcdembed.Client).
// For a server of another process (Dial) it is Client, as a manager on
// another host has. It is closed when the test ends.
func (s *Server) RolesClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	if s.Etcd == nil {
		return s.Client(tb)
	}
	c := etcdembed.Client(s.Etcd)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// freeAddr returns a loopback address with a port that was free a moment
// ago. The port is drawn below Linux's ephemeral range (32768 and up),
// which the kernel hands to outgoing connections: a port from there could
// be taken by any client's connection before the server binds it. A port
// is handed out once per process: a test that draws a port for each of a
// daemon's servers before it starts any of them would otherwise get the
// same one twice now and then. A clash is still possible, but only with
// another process's server.
func freeAddr() (string, error) {
	for range 50 {
		port := 20000 + rand.IntN(12000)
		if _, taken := handedOut.LoadOrStore(port, true); taken {
			continue
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if l, err := net.Listen("tcp", addr); err == nil {
			return addr, l.Close()
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// handedOut are the ports freeAddr has drawn in this process.
var handedOut sync.Map // int → true

// FreeAddr returns a loopback address whose port was free a moment ago:
// for a server a test starts, or as an address nothing listens on.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	addr, err := freeAddr()
	if err != nil {
		tb.Fatal(err)
	}
	return addr
}

// Shared is one embedded etcd for all of a package's tests, each keeping
// to a key prefix of its own. The first test that asks for it starts it,
// and RunShared stops it when the tests end. It starts within the tests,
// not before them: under go test -json, testing.M.Run points os.Stderr at
// os.Stdout before the first test, and etcd's serving goroutines read
// os.Stderr (through a logger a library makes), which the race detector
// reports against every package that started its etcd first.
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Server returns the shared server, started by the first call.
func (s *Shared) Server(tb testing.TB) *Server {
	tb.Helper()
	s.once.Do(func() { s.srv, s.err = New("") })
	if s.err != nil {
		tb.Fatalf("start embedded etcd: %v", s.err)
	}
	return s.srv
}

// Client returns a client of the shared server, closed when the test ends.
func (s *Shared) Client(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return s.Server(tb).Client(tb)
}

// RolesClient returns the daemon's roles' client of the shared server
// (Server.RolesClient), closed when the test ends.
func (s *Shared) RolesClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return s.Server(tb).RolesClient(tb)
}

// Use makes srv the shared server, before any test asks for one: a
// child process is handed its parent's (Dial).
func (s *Shared) Use(srv *Server) {
	s.once.Do(func() { s.srv = srv })
}

// RunShared is a package's TestMain with one server for all its tests:
// it runs the tests, stops the server if one started and returns the code
// to exit with.
func RunShared(m *testing.M, s *Shared) int {
	code := m.Run()
	s.once.Do(func() {}) // the tests are over: none starts it now
	if s.srv != nil {
		s.srv.Close()
	}
	return code
}
