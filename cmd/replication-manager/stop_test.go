package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/internal/certtest"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdauth"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/tcpproxy"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// stopDeadline is how long the tests below give run to return once its
// context ends. The design bound is stopBudget (under 10s); the tests only
// ask that run returns at all, with room for a slow, loaded machine.
const stopDeadline = 15 * time.Second

// stopDaemon is one daemon under test: run on the fake task control, its
// etcd reached through a proxy that the test cuts.
type stopDaemon struct {
	srv    *etcdtest.Server
	proxy  *tcpproxy.Proxy
	fake   *taskcontrol.Fake
	logs   *syncbuf.Buffer
	base   string
	cancel context.CancelFunc
	done   chan error
}

// startStopDaemon runs the daemon with --stop-when-isolated and the given
// extra flags; every other flag keeps its default, so that the stop path's
// deadlines are the ones a real daemon has.
func startStopDaemon(t *testing.T, srv *etcdtest.Server, identity string, extra ...string) *stopDaemon {
	t.Helper()
	d := &stopDaemon{
		srv:   srv,
		proxy: tcpproxy.New(t, strings.TrimPrefix(srv.ClientURL, "http://")),
		fake:  &taskcontrol.Fake{},
		logs:  &syncbuf.Buffer{},
		done:  make(chan error, 1),
	}
	addr := freeLoopbackAddr(t)
	d.base = "http://" + addr
	args := append([]string{
		"--etcd-servers=http://" + d.proxy.Addr(),
		"--metrics-bind-address=" + addr,
		"--leader-elect-identity=" + identity,
		"--node-name=stop-test",
		"--stop-when-isolated",
		"--log-level=debug",
	}, extra...)
	ctx, cancel := context.WithCancel(t.Context())
	d.cancel = cancel
	t.Cleanup(cancel)
	go func() {
		d.done <- runWith(ctx, args, io.Discard, d.logs, func(*options) (closingTaskControl, error) { return d.fake, nil })
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", d.logs)
		}
	})
	return d
}

// leadAndAct waits until the daemon leads, acts for its node and runs the
// two replicas of a controller on the fake.
func (d *stopDaemon) leadAndAct(t *testing.T) {
	t.Helper()
	store := registry.NewStore(d.srv.Client(t), registry.DefaultPrefix)
	if _, err := store.CreateController(t.Context(), demospec.Controller("web", "demo-task:latest", 2, nil)); err != nil {
		t.Fatalf("create the controller: %v", err)
	}
	waitForMetric(t, d.base, "replication_manager_is_leader 1")
	waitForMetric(t, d.base, "replication_manager_is_acting_for_node 1")
	testpoll.Until(t, waitTimeout, "both replicas on the fake", func() bool { return d.fake.Len() == 2 })
}

// cut cuts the daemon's way to etcd and waits until the daemon has
// noticed: its etcd client has lost its connection, and calls wait for a
// new one that never comes instead of failing on the old one.
func (d *stopDaemon) cut(t *testing.T) {
	t.Helper()
	d.proxy.Cut()
	waitForHTTP(t, d.base+"/readyz", http.StatusServiceUnavailable, waitTimeout)
}

// stopAndWait cancels run's context, as SIGTERM does through
// signal.NotifyContext, and fails the test unless run returns nil within
// stopDeadline.
func (d *stopDaemon) stopAndWait(t *testing.T) {
	t.Helper()
	d.cancel()
	start := time.Now()
	deadline := time.NewTimer(stopDeadline)
	defer deadline.Stop()
	select {
	case err := <-d.done:
		t.Logf("run returned %s after its context ended", time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Errorf("run returned %v after its context ended, want nil", err)
		}
	case <-deadline.C:
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("run did not return within %s after its context ended, etcd being cut off; the goroutines:\n%s", stopDeadline, stacks.String())
	}
}

// SIGTERM ends the daemon even when etcd cannot be reached: every resign,
// revoke, session close and final write of the stop path has a deadline.
// The proxy is cut: open connections close and new ones are refused, so
// that every etcd call waits for a connection that never comes.
func TestStopEndsRunWhileEtcdIsCutOff(t *testing.T) {
	t.Parallel()

	t.Run("while leading and acting", func(t *testing.T) {
		t.Parallel()
		d := startStopDaemon(t, etcdtest.Start(t, fastElection), "a")
		d.leadAndAct(t)
		d.cut(t)
		d.stopAndWait(t)
		if n := d.fake.Len(); n != 2 {
			t.Errorf("%d containers left on the fake after the stop, want the 2 left running", n)
		}
		expectNoRepeatedAttr(t, d.logs.String(), "node")
	})

	t.Run("while a sync waits on etcd", func(t *testing.T) {
		t.Parallel()
		d := startStopDaemon(t, etcdtest.Start(t, fastElection), "a")
		d.leadAndAct(t)
		d.cut(t)
		// a container removed behind the manager's back: the manager
		// replaces it (its session still lives), then reports to etcd
		tasks := d.fake.Tasks()
		if err := d.fake.DeleteTask(t.Context(), tasks[0].ID); err != nil {
			t.Fatal(err)
		}
		testpoll.Until(t, waitTimeout, "the replacement on the fake", func() bool { return len(d.fake.Creates()) == 3 })
		d.stopAndWait(t)
		if n := d.fake.Len(); n != 2 {
			t.Errorf("%d containers left on the fake after the stop, want the 2 left running", n)
		}
	})

	t.Run("after the node removed its containers", func(t *testing.T) {
		t.Parallel()
		// a short lease: the node counts itself isolated after half of it
		d := startStopDaemon(t, etcdtest.Start(t, fastElection), "a", "--leader-elect-lease-duration=4s")
		d.leadAndAct(t)
		d.cut(t)
		testpoll.Until(t, waitTimeout, "the isolated node to remove its containers", func() bool { return d.fake.Len() == 0 })
		// both terms end (the node's isolated, the leader's session
		// expired), and both roles campaign again, on an etcd that does
		// not answer
		testpoll.Until(t, waitTimeout, "both roles to ask etcd for a new session's lease", func() bool {
			return strings.Count(d.logs.String(), "election: starting over") >= 2 &&
				strings.Count(d.logs.String(), "granting a session lease") >= 4 // two each
		})
		d.stopAndWait(t)
	})

	t.Run("while standing by", func(t *testing.T) {
		t.Parallel()
		srv := etcdtest.Start(t, fastElection)
		a := startStopDaemon(t, srv, "a")
		a.leadAndAct(t)
		// b, on the same node, campaigns behind a in both elections
		b := startStopDaemon(t, srv, "b")
		testpoll.Until(t, waitTimeout, "b to campaign in both elections", func() bool {
			return strings.Count(b.logs.String(), "waiting for my turn") == 2
		})
		waitForHTTP(t, b.base+"/readyz", http.StatusOK, waitTimeout) // a standby is ready
		b.cut(t)
		b.stopAndWait(t)
	})

	t.Run("before etcd ever answered", func(t *testing.T) {
		t.Parallel()
		d := startStopDaemon(t, etcdtest.Start(t, fastElection), "a")
		d.cut(t)
		testpoll.Until(t, waitTimeout, "the daemon to start", func() bool {
			return strings.Contains(d.logs.String(), "replication manager started")
		})
		d.stopAndWait(t)
	})
}

// The stop's deadlines, with the defaults, sum to under the 10s that
// SIGTERM may take.
func TestStopDeadlinesStayUnderTenSeconds(t *testing.T) {
	opts := newDaemonOptions()
	if opts.ShutdownGracePeriod != defaultShutdownGracePeriod {
		t.Fatalf("the daemon's --shutdown-grace-period defaults to %s, want %s", opts.ShutdownGracePeriod, defaultShutdownGracePeriod)
	}
	longest := roles.StopWait(opts.ShutdownGracePeriod) + roles.HandoverTimeout + embeddedCloseTimeout
	if longest != stopBudget || stopBudget >= 10*time.Second {
		t.Errorf("the stop's deadlines sum to %s (stopBudget %s), want under 10s", longest, stopBudget)
	}
	if httpShutdownTimeout >= 10*time.Second {
		t.Errorf("httpShutdownTimeout %s, want under 10s", httpShutdownTimeout)
	}
}

// The embedded etcd, with another client's watch open on it (a standby
// manager's, an rcctl's), closes within the stop's budget: etcd itself
// would give that stream its request timeout (7s) to end.
func TestStopEndsRunWithEmbeddedEtcdAndAnotherClientWatching(t *testing.T) {
	t.Parallel()
	clientAddr, peerAddr := etcdtest.FreeAddr(t), etcdtest.FreeAddr(t)
	metrics := freeLoopbackAddr(t)
	logs := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runWith(ctx, []string{
			"--etcd-data-dir=" + t.TempDir(),
			"--etcd-listen-client-urls=http://" + clientAddr,
			"--etcd-listen-peer-urls=http://" + peerAddr,
			"--metrics-bind-address=" + metrics,
			"--leader-elect-identity=embedded",
			"--node-name=embedded",
		}, io.Discard, logs, func(*options) (closingTaskControl, error) { return &taskcontrol.Fake{}, nil })
	}()
	defer func() {
		if t.Failed() {
			t.Logf("the daemon's log:\n%s", logs)
		}
	}()
	waitForMetric(t, "http://"+metrics, "replication_manager_is_acting_for_node 1")
	other, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + clientAddr}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	watch := other.Watch(clientv3.WithRequireLeader(t.Context()), registry.DefaultPrefix+"/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp := <-watch; !resp.Created {
		t.Fatalf("watch not created: %v", resp.Err())
	}

	cancel()
	start := time.Now()
	deadline := time.NewTimer(stopDeadline)
	defer deadline.Stop()
	select {
	case err := <-done:
		t.Logf("run returned %s after its context ended", time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Errorf("run returned %v, want nil", err)
		}
	case <-deadline.C:
		t.Fatalf("run did not return within %s after its context ended", stopDeadline)
	}
}

// A node's manager that etcd refuses (here: no permission on the registry
// id) ends the daemon with the refusal, also under --stop-when-isolated,
// whose watchdog used to be waited for before it was told to stop: the
// daemon hung instead of failing.
func TestRunFailsWhenEtcdRefusesTheNodesManagerUnderStopWhenIsolated(t *testing.T) {
	t.Parallel()
	certs := certtest.New(t)
	tlsURL := url.URL{Scheme: "https", Host: etcdtest.FreeAddr(t)}
	srv := etcdtest.Start(t, fastAuth, func(cfg *embed.Config) {
		cfg.ListenClientUrls = append(cfg.ListenClientUrls, tlsURL)
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: certs.ServerCertFile, KeyFile: certs.ServerKeyFile}
	})
	setup := srv.Client(t)
	if err := etcdauth.GrantManagerRole(t.Context(), setup, registry.DefaultPrefix, "replication-manager", "rm-password"); err != nil {
		t.Fatalf("GrantManagerRole: %v", err)
	}
	key := registry.NewStore(nil, registry.DefaultPrefix).RegistryIDKey()
	if _, err := setup.RoleRevokePermission(t.Context(), etcdauth.RoleName, key, ""); err != nil {
		t.Fatalf("revoke the registry id from the role: %v", err)
	}
	enableAuth(t, srv)

	logs := &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- runWith(t.Context(), []string{
			"--etcd-servers=" + tlsURL.String(),
			"--etcd-cafile=" + certs.CAFile,
			"--etcd-user=replication-manager",
			"--etcd-password=rm-password",
			"--metrics-bind-address=0",
			"--leader-elect-identity=refused",
			"--node-name=refused",
			"--stop-when-isolated",
		}, io.Discard, logs, func(*options) (closingTaskControl, error) { return &taskcontrol.Fake{}, nil })
	}()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("run returned %v, want the refusal (permission denied)", err)
		}
	case <-deadline.C:
		t.Fatalf("run did not return within %s of etcd refusing the node's manager; its log:\n%s", waitTimeout, logs)
	}
}

// expectNoRepeatedAttr fails the test when a line of the text log names
// the attribute key twice, as a line of a logger made With(key, ...)
// that gives key again does; and when no line names it at all.
func expectNoRepeatedAttr(t *testing.T, logs, key string) {
	t.Helper()
	seen := false
	for line := range strings.Lines(logs) {
		switch n := strings.Count(line, " "+key+"="); {
		case n > 1:
			t.Errorf("%s= appears %d times in a log line: %s", key, n, line)
		case n == 1:
			seen = true
		}
	}
	if !seen {
		t.Errorf("no log line has %s=", key)
	}
}
