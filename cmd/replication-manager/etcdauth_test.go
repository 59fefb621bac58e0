package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/certtest"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdauth"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// The manager runs as a user that has only the least-privilege role, on an
// etcd with auth on, through the same leader and etcd client code as the
// daemon: it must do all of its work, and must not be able to touch a spec.
func TestManagerDoesItsWorkWithTheLeastPrivilegeRoleAndCannotWriteSpecs(t *testing.T) {
	t.Parallel()
	// The setup and the checks go over plain http; the manager, whose auth
	// flags need TLS, over https with the server's CA.
	certs := certtest.New(t)
	tlsURL := url.URL{Scheme: "https", Host: etcdtest.FreeAddr(t)}
	srv := etcdtest.Start(t, fastAuth, func(cfg *embed.Config) {
		cfg.ListenClientUrls = append(cfg.ListenClientUrls, tlsURL)
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: certs.ServerCertFile, KeyFile: certs.ServerKeyFile}
	})
	ctx := t.Context()
	if err := etcdauth.GrantManagerRole(ctx, srv.Client(t), registry.DefaultPrefix, "replication-manager", "rm-password"); err != nil {
		t.Fatalf("GrantManagerRole: %v", err)
	}
	admin := enableAuth(t, srv)
	users := registry.NewStore(admin, registry.DefaultPrefix) // what rcctl does as a user with write access
	if _, err := users.CreateController(ctx, testController("web", 2)); err != nil {
		t.Fatalf("create spec as root: %v", err)
	}

	opts := newOptions()
	opts.EtcdServers = []string{tlsURL.String()}
	opts.EtcdCAFile = certs.CAFile
	opts.EtcdUser, opts.EtcdPassword = "replication-manager", "rm-password"
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	client, err := newEtcdClient(ctx, opts, opts.EtcdServers, zap.NewNop())
	if err != nil {
		t.Fatalf("newEtcdClient as the manager's user: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store := registry.NewStore(client, opts.RegistryPrefix)
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fake := &taskcontrol.Fake{}
	opts.LeaderElectIdentity, opts.LeaderElectLeaseDuration, opts.SyncPeriod = "rm-1", 2*time.Second, time.Second
	engine, _ := fake.Engine(ctx)
	r := newRoles(client, store, opts, fake, logger, engine, prometheus.NewRegistry())
	runCtx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("leader stopped with %v", err)
		}
	}()

	// campaign and lead: the election keys and the session's lease
	testpoll.Until(t, waitTimeout, "the manager to lead", r.Leads)
	// publish its policy as its term starts
	testpoll.Until(t, waitTimeout, "the leader's policy", func() bool {
		p, err := users.GetPolicy(ctx)
		return err == nil && p.Leader == "rm-1"
	})
	// list the specs and act; write the status; record events under a lease
	testpoll.Until(t, waitTimeout, "2 containers", func() bool { return fake.Len() == 2 })
	waitForStatus(t, users, "web", 2)
	testpoll.Until(t, waitTimeout, "a Created event", func() bool {
		events, err := users.ListEvents(ctx, "web")
		return err == nil && len(events) > 0 && events[0].Reason == "Created"
	})
	// the /readyz check of etcd
	if err := pingEtcd(ctx, client, store.ControllersPrefix(), 2*time.Second); err != nil {
		t.Errorf("readiness ping of etcd as the manager's user: %v", err)
	}
	// watch the specs: a scale is seen without a relist
	spec, err := users.GetController(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	spec.Controller.DesiredState.Replicas = 3
	if _, err := users.UpdateController(ctx, spec.Controller, spec.ModRevision); err != nil {
		t.Fatal(err)
	}
	testpoll.Until(t, waitTimeout, "3 containers after a scale", func() bool { return fake.Len() == 3 })
	waitForStatus(t, users, "web", 3)
	// a deleted spec: containers removed, status deleted
	if err := users.DeleteController(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	testpoll.Until(t, waitTimeout, "no container after the spec is deleted", func() bool { return fake.Len() == 0 })
	testpoll.Until(t, waitTimeout, "the status to be deleted", func() bool {
		_, err := users.GetStatus(ctx, "web")
		return errors.Is(err, registry.ErrNotFound)
	})

	// the manager's user cannot write, replace or delete a spec
	if _, err := users.CreateController(ctx, testController("kept", 1)); err != nil {
		t.Fatal(err)
	}
	for what, op := range map[string]func() error{
		"create a spec": func() error { _, err := store.CreateController(ctx, testController("x", 1)); return err },
		"put a spec":    func() error { _, err := client.Put(ctx, store.ControllerKey("x"), "{}"); return err },
		"replace a spec": func() error {
			_, err := client.Put(ctx, store.ControllerKey("kept"), "{}")
			return err
		},
		"delete a spec": func() error { return store.DeleteController(ctx, "kept") },
		"write outside the registry": func() error {
			_, err := client.Put(ctx, "/elsewhere", "x")
			return err
		},
	} {
		if err := op(); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s as the manager's user: %v, want %v", what, err, rpctypes.ErrPermissionDenied)
		}
	}

	// resign on shutdown: delete the election key, revoke the lease
	stop()
	if err := <-done; err != nil {
		t.Errorf("leader stopped with %v", err)
	}
	done <- nil // for the deferred stop, which already reported
	resp, err := admin.Get(ctx, registry.DefaultPrefix+"/election/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d election keys left after the manager resigned, want 0", resp.Count)
	}
	if strings.Contains(logs.String(), "permission denied") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("the manager met a refusal or a warning; its log:\n%s", logs)
	}
}

// fastAuth makes a test etcd elect itself at once and hash passwords at
// bcrypt's lowest cost, which the race detector otherwise makes slow.
func fastAuth(cfg *embed.Config) {
	cfg.TickMs, cfg.ElectionMs = 10, 100
	cfg.BcryptCost = 4 // bcrypt.MinCost
}

// enableAuth adds the root user with the root role, turns auth on and
// returns a client logged in as root.
func enableAuth(t *testing.T, srv *etcdtest.Server) *clientv3.Client {
	t.Helper()
	ctx := t.Context()
	client := srv.Client(t)
	for _, step := range []func() error{
		func() error { _, err := client.RoleAdd(ctx, "root"); return err },
		func() error { _, err := client.UserAdd(ctx, "root", "root-password"); return err },
		func() error { _, err := client.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := client.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enable etcd auth: %v", err)
		}
	}
	root, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.ClientURL}, DialTimeout: 5 * time.Second, Username: "root", Password: "root-password"})
	if err != nil {
		t.Fatalf("etcd client as root: %v", err)
	}
	t.Cleanup(func() { _ = root.Close() })
	return root
}

func waitForStatus(t *testing.T, store *registry.Store, id string, replicas int) {
	t.Helper()
	testpoll.Until(t, waitTimeout, fmt.Sprintf("status of %s with %d replicas", id, replicas), func() bool {
		st, err := store.GetStatus(t.Context(), id)
		return err == nil && st.Replicas == replicas
	})
}

// testController returns the 2014 example controller with id and replicas.
func testController(id string, replicas int) *api.ReplicationController {
	return demospec.Controller(id, "demo-task:latest", replicas, nil)
}
