package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// TestEachLeaderPublishesThePolicyOfItsFlagsWhenItsTermStarts: the first
// manager leads and publishes what its flags allow; once it stops, the
// standby leads and its own, stricter policy replaces it, before it
// decides anything.
func TestEachLeaderPublishesThePolicyOfItsFlagsWhenItsTermStarts(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, fastElection)
	client := srv.Client(t)
	store := registry.NewStore(client, registry.DefaultPrefix)
	ctx := t.Context()

	start := func(identity string, set func(*options)) (r *roles.Roles, stop func()) {
		opts := newOptions()
		opts.LeaderElectIdentity, opts.LeaderElectLeaseDuration, opts.SyncPeriod = identity, 2*time.Second, time.Second
		set(opts)
		if err := opts.Validate(); err != nil {
			t.Fatal(err)
		}
		logs := &syncbuf.Buffer{}
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		fake := &taskcontrol.Fake{}
		engine, _ := fake.Engine(ctx)
		engine.Name = identity // a node of its own
		r = newRoles(client, store, opts, fake, logger, engine, prometheus.NewRegistry())
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		stopped := false
		stop = func() {
			if stopped {
				return
			}
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s stopped with %v", identity, err)
			}
			if t.Failed() {
				t.Logf("%s's log:\n%s", identity, logs)
			}
		}
		t.Cleanup(stop)
		return r, stop
	}

	first, stopFirst := start("rm-1", func(o *options) {
		o.AllowHostPorts, o.AllowPrivileged, o.MaxReplicas = true, true, 50
	})
	testpoll.Until(t, waitTimeout, "rm-1 to lead", first.Leads)
	want := registry.NewPolicy(api.SecurityPolicy{AllowHostPorts: true, AllowPrivileged: true}, 50, "rm-1")
	want.Elected = true // both campaign
	testpoll.Until(t, waitTimeout, "rm-1's policy", func() bool {
		p, err := store.GetPolicy(ctx)
		return err == nil && p == want
	})
	second, _ := start("rm-2", func(o *options) { o.AllowHostNetwork = true })
	time.Sleep(500 * time.Millisecond) // a standby publishes nothing
	if p, err := store.GetPolicy(ctx); err != nil || p != want {
		t.Fatalf("policy while rm-2 stands by: %+v (%v), want rm-1's %+v", p, err, want)
	}

	stopFirst() // resigns: rm-2 leads at once
	testpoll.Until(t, waitTimeout, "rm-2 to lead", second.Leads)
	want = registry.NewPolicy(api.SecurityPolicy{AllowHostNetwork: true}, api.DefaultMaxReplicas, "rm-2")
	want.Elected = true
	testpoll.Until(t, waitTimeout, "rm-2's policy", func() bool {
		p, err := store.GetPolicy(ctx)
		return err == nil && p == want
	})
}
