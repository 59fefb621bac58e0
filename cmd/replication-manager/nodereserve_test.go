package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestValidateNamesTheFlagAndTheItemOfABadNodeReserve(t *testing.T) {
	t.Setenv("DOCKER_HOST", "") // the local socket: no transport error
	opts := newOptions()
	if err := parseForTest(opts, []string{"--node-reserve", "memory=1Gi,cpu=lots"}); err != nil {
		t.Fatal(err)
	}
	want := `--node-reserve: "cpu=lots": not a quantity of CPU`
	if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate() = %v, want an error with %q", err, want)
	}
	opts = newOptions()
	if err := parseForTest(opts, []string{"--node-reserve", "memory=512MiB,cpu=500m"}); err != nil {
		t.Fatal(err)
	}
	if err := opts.Validate(); err != nil {
		t.Errorf("Validate() = %v for a good reserve", err)
	}
}

func TestAReserveOverTheEnginesMachineIsRefusedAtStart(t *testing.T) {
	opts := newOptions()
	opts.NodeReserve = "memory=5Gi" // the fake engine has 4GiB
	_, err := nodeEngine(t.Context(), opts, &taskcontrol.Fake{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	want := "--node-reserve memory=5Gi: the reserve leaves no room for tasks: memory 5GiB is not less than the node's 4GiB"
	if err == nil || err.Error() != want {
		t.Errorf("nodeEngine() = %v, want %q", err, want)
	}
	opts.NodeReserve = "memory=1Gi,cpu=1.5"
	if _, err := nodeEngine(t.Context(), opts, &taskcontrol.Fake{}, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Errorf("nodeEngine() = %v for a reserve under the machine", err)
	}
}

func TestTheNodeRegistersItsReserve(t *testing.T) {
	client := etcdtest.Start(t).Client(t)
	store := registry.NewStore(client, "/reservetest")
	opts := newOptions()
	opts.NodeReserve = "memory=1Gi,cpu=500m"
	fake := &taskcontrol.Fake{EngineName: "a"}
	engine, _ := fake.Engine(t.Context())
	r := newRoles(client, store, opts, fake, slog.New(slog.NewTextHandler(io.Discard, nil)), engine, prometheus.NewRegistry())
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the roles stopped with %v", err)
		}
	}()
	var n *api.Node
	testpoll.Until(t, waitTimeout, "the node's registration", func() bool {
		var err error
		n, err = store.GetNode(ctx, "a")
		return err == nil
	})
	if want := (api.NodeReserved{CPUs: 0.5, Memory: 1 << 30}); n.Reserved != want || n.Capacity.Memory != 4<<30 {
		t.Errorf("registered %+v, capacity %+v; want reserved %+v of 4GiB", n.Reserved, n.Capacity, want)
	}
}
