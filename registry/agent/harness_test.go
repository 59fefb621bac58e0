package agent

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/testclock"
	"github.com/replication-manager/replication-manager/internal/testlog"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// One embedded etcd serves the whole package; every test gets its own key
// prefix, so tests stay independent.
var etcdServer *etcdtest.Server

func TestMain(m *testing.M) {
	flag.Parse()
	briefHistories()
	os.Exit(etcdtest.RunShared(m, &etcdServer))
}

// briefCheckHistories is how many random histories the cluster's property
// test runs in make test, unless -rapid.checks says otherwise: each takes
// a cluster on the embedded etcd, and make prop runs thousands.
const briefCheckHistories = "30"

// briefHistories lowers rapid's default number of histories to
// briefCheckHistories when -rapid.checks was not given.
func briefHistories() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	if !given {
		if err := flag.Set("rapid.checks", briefCheckHistories); err != nil {
			panic(err)
		}
	}
}

// testClient returns a client of the package's embedded etcd.
func testClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	return etcdServer.Client(tb)
}

// harness is one host as the daemon runs it: a leader (Scheduler) and the
// node's manager in one process, on a fake task control and the real
// embedded etcd, the node registered under a lease of its own. The leader
// runs from the start, on the harness's clock; tests drive the node one
// step at a time (sync), waiting for the leader to catch up between the
// steps, or let it run (run).
type harness struct {
	rm     *Agent
	sched  *leader.ReplicationManager
	fake   *taskcontrol.Fake
	store  *registry.Store
	client *clientv3.Client
	clock  *testclock.Clock
	// stopBackground stops the event writer and the feeder the harness
	// runs for syncs called directly; Run has its own.
	stopBackground func()
	// stopLeader stops the running leader and waits for its Run.
	stopLeader func()
}

// harnessNode is the node name of a harness.
const harnessNode = "a"

// harnesses numbers the harnesses of a test binary.
var harnesses atomic.Int64

// testRegistryID is the registry id of a harness's manager.
const testRegistryID = "test-registry"

func newHarness(tb testing.TB, opts Options) *harness {
	tb.Helper()
	client := testClient(tb)
	// a prefix of its own, also when -count runs the test again
	store := registry.NewStore(client, fmt.Sprintf("/test/%s-%d", strings.ReplaceAll(tb.Name(), "/", "_"), harnesses.Add(1)))
	clock := testclock.New(time.Now())
	fake := &taskcontrol.Fake{Now: clock.Now}
	lease, err := client.Grant(tb.Context(), 3600) // outlives any test, however slow the machine
	if err != nil {
		tb.Fatal(err)
	}
	if err := store.RegisterNode(tb.Context(), &api.Node{Name: harnessNode, EngineID: "engine-" + harnessNode}, lease.ID); err != nil {
		tb.Fatal(err)
	}
	opts.Node = NodeOptions{Name: harnessNode, Lease: lease.ID}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	rm := New(store, fake, testLogger(tb), opts)
	rm.registryID = testRegistryID
	// Run writes events off the sync's path and feeds the queue's second
	// lane; for syncs called directly, the harness does both until Run
	// takes over (stopBackground)
	ctx, cancel := context.WithCancel(tb.Context())
	var background sync.WaitGroup
	background.Go(func() { rm.events.run(ctx) })
	background.Go(func() { rm.feed(ctx) })
	stopBackground := sync.OnceFunc(func() {
		cancel()
		background.Wait()
	})
	tb.Cleanup(func() {
		rm.queue.ShutDown()
		rm.pulls.stop()
		stopBackground()
	})
	h := &harness{rm: rm, fake: fake, store: store, client: client, clock: clock, stopBackground: stopBackground}
	h.startLeader(tb, leader.Options{SyncPeriod: opts.SyncPeriod, MaxReplicas: opts.MaxReplicas,
		Policy: opts.Policy, RevisionHistoryLimit: opts.RevisionHistoryLimit})
	return h
}

// startLeader runs a new leader with opts on the harness's clock, in place
// of the one running: it knows only what etcd holds. It runs until the
// test ends, and Run must end without an error.
func (h *harness) startLeader(tb testing.TB, opts leader.Options) {
	tb.Helper()
	if h.stopLeader != nil {
		h.stopLeader()
	}
	opts.Clock = h.clock
	h.sched = leader.NewReplicationManager(h.store, testLogger(tb), opts)
	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.Context()))
	done := make(chan error, 1)
	go func() { done <- h.sched.Run(ctx) }()
	h.stopLeader = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("the leader's Run: %v", err)
		}
	})
	tb.Cleanup(h.stopLeader)
}

// testLogger is the package tests' logger (internal/testlog).
func testLogger(tb testing.TB) *slog.Logger {
	tb.Helper()
	return testlog.Logger()
}

// newController returns the 2014 example controller with id and replicas,
// its containers labelled tier=demo too.
func newController(id string, replicas int) *api.ReplicationController {
	return demospec.Controller(id, "demo-task:latest", replicas, map[string]string{"tier": "demo"})
}

// setSpec stores rc as a user would, and puts it into the node's spec
// cache at the revision etcd gave it, as the node's watch would; the
// leader lists it at its next decision. It returns that revision.
func (h *harness) setSpec(rc *api.ReplicationController) int64 {
	data, err := json.Marshal(rc)
	if err != nil {
		panic(err)
	}
	return h.setRawSpec(rc.ID, data)
}

// setRawSpec is setSpec of a raw value, for specs that do not decode.
func (h *harness) setRawSpec(id string, value []byte) int64 {
	key := h.store.ControllerKey(id)
	resp, err := h.client.Put(context.Background(), key, string(value))
	if err != nil {
		panic(err)
	}
	h.rm.specs.mu.Lock()
	h.rm.specs.listed = true
	h.rm.specs.mu.Unlock()
	h.rm.specs.put(h.store.DecodeSpec(key, value, resp.Header.Revision, 0))
	return resp.Header.Revision
}

// deleteSpec deletes id's spec, and removes it from the node's spec
// cache, as the node's watch would.
func (h *harness) deleteSpec(id string) {
	resp, err := h.client.Delete(context.Background(), h.store.ControllerKey(id))
	if err != nil {
		panic(err)
	}
	h.rm.specs.remove(id, resp.Header.Revision)
}

// sync runs one step of the host for id: the leader decides from what is
// in etcd, the node runs the assignments, and the leader writes the
// status from the node's report.
func (h *harness) sync(t *testing.T, id string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := h.lead(ctx); err != nil {
		return err
	}
	if err := h.follow(ctx, h.store.AssignmentsPrefix(), h.rm.slots); err != nil {
		return err
	}
	// a resync's list first, as if the cache had seen every change
	if err := h.rm.relistTasks(ctx); err != nil {
		return err
	}
	err := h.rm.syncSlots(ctx, id)
	return errors.Join(err, h.lead(ctx))
}

// step is sync without the resync's list of containers: the leader
// decides, the node syncs from its cache, the leader writes the status.
func (h *harness) step(ctx context.Context, id string) error {
	if err := h.lead(ctx); err != nil {
		return err
	}
	if err := h.follow(ctx, h.store.AssignmentsPrefix(), h.rm.slots); err != nil {
		return err
	}
	err := h.rm.syncSlots(ctx, id)
	return errors.Join(err, h.lead(ctx))
}

// assign runs the leader's decision for id and brings its assignments to
// the node, without a node sync.
func (h *harness) assign(t *testing.T, id string) {
	t.Helper()
	if err := h.lead(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.follow(t.Context(), h.store.AssignmentsPrefix(), h.rm.slots); err != nil {
		t.Fatal(err)
	}
}

// newNodeManager returns another manager for the harness's node, as a
// restart makes one.
func (h *harness) newNodeManager(t *testing.T, opts Options) *Agent {
	t.Helper()
	opts.Node = h.rm.opts.Node
	return New(h.store, h.fake, testLogger(t), opts)
}

// lead has the running leader decide every controller again, as its
// periodic pass does, and waits until it has caught up with etcd: every
// change applied, every decision written.
func (h *harness) lead(ctx context.Context) error {
	h.sched.Synchronize()
	return h.sched.CaughtUp(ctx)
}

// follow lists prefix into t, as a mirror's list does.
func (h *harness) follow(ctx context.Context, prefix string, t registry.MirrorTarget) error {
	_, err := h.store.MirrorList(ctx, prefix, t)
	return err
}

// addTask starts a container in the fake as if the manager had made it
// from newController's template.
func (h *harness) addTask(t *testing.T, id string, slot int, state string) string {
	t.Helper()
	cid, err := h.fake.Add(api.Task{
		Name: api.TaskName(id, slot),
		Labels: map[string]string{
			"name": id, api.LabelController: id, api.LabelSlot: strconv.Itoa(slot),
			api.LabelTemplateHash: api.TemplateHash(&newController(id, 1).DesiredState.TaskTemplate),
		},
		State: state,
	})
	if err != nil {
		t.Fatalf("add %s-%d: %v", id, slot, err)
	}
	return cid
}

// status reads the stored status of id; nil when there is none. Any other
// etcd error fails the test.
func (h *harness) status(t *testing.T, id string) *api.ReplicationControllerStatus {
	t.Helper()
	st, err := h.store.GetStatus(t.Context(), id)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nil
	case err != nil:
		t.Fatalf("read the status of %s: %v", id, err)
	}
	return st
}

// validateSyncReplication asserts the creates and deletes of the fake, the
// 2014 one-line check.
func validateSyncReplication(t *testing.T, fake *taskcontrol.Fake, creates, deletes int) {
	t.Helper()
	if got := len(fake.Creates()); got != creates {
		t.Errorf("creates = %d (%v), want %d", got, fake.Creates(), creates)
	}
	if got := len(fake.Deletes()); got != deletes {
		t.Errorf("deletes = %d, want %d", got, deletes)
	}
}

// waitTimeout bounds every wait of the package's tests.
const waitTimeout = 20 * time.Second

// run starts the node's manager too (the leader runs already), until the
// test ends.
func (h *harness) run(t *testing.T) {
	t.Helper()
	h.stopBackground()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func (h *harness) create(t *testing.T, rc *api.ReplicationController) {
	t.Helper()
	if _, err := h.store.CreateController(t.Context(), rc); err != nil {
		t.Fatalf("create %s: %v", rc.ID, err)
	}
}

func (h *harness) scale(t *testing.T, id string, replicas int) {
	t.Helper()
	spec, err := h.store.GetController(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	spec.Controller.DesiredState.Replicas = replicas
	if _, err := h.store.UpdateController(t.Context(), spec.Controller, spec.ModRevision); err != nil {
		t.Fatalf("scale %s: %v", id, err)
	}
}

// waitForNames waits until the fake's containers are exactly want.
func (h *harness) waitForNames(t *testing.T, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	testpoll.Until(t, waitTimeout, "containers "+sprint(want), func() bool {
		return slices.Equal(names(h.fake.Tasks()), want)
	})
}

func sprint(v any) string { b, _ := json.Marshal(v); return string(b) }
