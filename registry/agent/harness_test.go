package agent_test

// The harness of the package's external tests: one host whose leader and
// node's manager are built as the daemon builds them (registry/roles).

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/testclock"
	"github.com/replication-manager/replication-manager/internal/testlog"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/leader"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// harness is one host as the daemon runs it: a leader and the node's
// manager in one process, both built by roles.New as the daemon builds
// them, on a fake task control and the real embedded etcd, the node
// registered under a lease of its own. The leader runs from the start, on
// the harness's clock; tests drive the node one step at a time (sync),
// waiting for the leader to catch up between the steps, or let it run
// (run).
type harness struct {
	rm     *agent.Agent
	sched  *leader.ReplicationManager
	fake   *taskcontrol.Fake
	store  *registry.Store
	client *clientv3.Client
	clock  *testclock.Clock
	// opts are the options of the node's manager (roles.New).
	opts roles.Options
	// stopBackground stops the event writer and the feeder the harness
	// runs for syncs called directly; Run has its own.
	stopBackground func()
	// stopLeader stops the running leader and waits for its Run.
	stopLeader func()
}

// harnessNode is the node name of a harness.
const harnessNode = "a"

// newHarness builds a harness from opts, whose Client, Store, Node and
// Identity it sets; a nil Logger, TaskControl or Clock is the harness's.
// A TaskControl of the test's is the node's engine in place of the fake;
// the tests that give one wrap the harness's fake in it.
func newHarness(tb testing.TB, opts roles.Options) *harness {
	tb.Helper()
	store := newStore(tb)
	client := store.Client()
	clock := testclock.New(time.Now())
	fake := &taskcontrol.Fake{Now: clock.Now}
	lease, err := client.Grant(tb.Context(), 3600) // outlives any test, however slow the machine
	if err != nil {
		tb.Fatal(err)
	}
	node := api.Node{Name: harnessNode, EngineID: "engine-" + harnessNode}
	if err := store.RegisterNode(tb.Context(), &node, lease.ID); err != nil {
		tb.Fatal(err)
	}
	opts.Client, opts.Store = client, store
	if opts.Logger == nil {
		opts.Logger = testLogger(tb)
	}
	if opts.TaskControl == nil {
		opts.TaskControl = fake
	}
	opts.Node, opts.Identity = node, "rm-"+harnessNode
	if opts.Clock == nil {
		opts.Clock = clock
	}
	h := &harness{fake: fake, store: store, client: client, clock: clock, opts: opts}
	h.rm = roles.New(opts).NodeManager(lease.ID)
	h.rm.SetRegistryID(testRegistryID)
	// Run writes events off the sync's path and feeds the queue's second
	// lane; for syncs called directly, the harness does both until Run
	// takes over (stopBackground)
	ctx, cancel := context.WithCancel(tb.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.rm.RunBackground(ctx)
	}()
	h.stopBackground = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	tb.Cleanup(func() {
		h.rm.StopQueues()
		h.stopBackground()
	})
	h.startLeader(tb, roles.Options{SyncPeriod: opts.SyncPeriod, MaxReplicas: opts.MaxReplicas,
		Policy: opts.Policy, RevisionHistoryLimit: opts.RevisionHistoryLimit, Workers: opts.Workers})
	return h
}

// startLeader runs the leader's part of a new manager of opts (roles.New)
// on the harness's clock, in place of the one running: its leader knows
// only what etcd holds. It runs until the test ends, and must end without
// an error (runLeader).
func (h *harness) startLeader(tb testing.TB, opts roles.Options) {
	tb.Helper()
	if h.stopLeader != nil {
		h.stopLeader()
	}
	opts.Client, opts.Store, opts.Logger, opts.Identity, opts.Clock = h.client, h.store, testLogger(tb), "leader", h.opts.Clock
	var stop func() error
	h.sched, stop = runLeader(tb, opts)
	h.stopLeader = sync.OnceFunc(func() {
		if err := stop(); err != nil {
			tb.Errorf("the leader: %v", err)
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

// testRegistryID is the registry id of a harness's manager.
const testRegistryID = agent.TestRegistryID

// wallClock is the real time, for a harness whose leader and node do not
// run on the harness's clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }

func (wallClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
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
	h.rm.MarkSpecsListed()
	h.rm.PutSpec(h.store.DecodeSpec(key, value, resp.Header.Revision, 0))
	return resp.Header.Revision
}

// deleteSpec deletes id's spec, and removes it from the node's spec
// cache, as the node's watch would.
func (h *harness) deleteSpec(id string) {
	resp, err := h.client.Delete(context.Background(), h.store.ControllerKey(id))
	if err != nil {
		panic(err)
	}
	h.rm.RemoveSpec(id, resp.Header.Revision)
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
	if err := h.follow(ctx, h.store.AssignmentsPrefix(), h.rm.Slots()); err != nil {
		return err
	}
	// a resync's list first, as if the cache had seen every change
	if err := h.rm.RelistTasks(ctx); err != nil {
		return err
	}
	err := h.rm.SyncSlots(ctx, id)
	return errors.Join(err, h.lead(ctx))
}

// syncTimes runs n syncs of id, failing the test at the first error.
func (h *harness) syncTimes(t *testing.T, id string, n int) {
	t.Helper()
	for range n {
		if err := h.sync(t, id); err != nil {
			t.Fatal(err)
		}
	}
}

// step is sync without the resync's list of containers: the leader
// decides, the node syncs from its cache, the leader writes the status.
func (h *harness) step(ctx context.Context, id string) error {
	if err := h.lead(ctx); err != nil {
		return err
	}
	if err := h.follow(ctx, h.store.AssignmentsPrefix(), h.rm.Slots()); err != nil {
		return err
	}
	err := h.rm.SyncSlots(ctx, id)
	return errors.Join(err, h.lead(ctx))
}

// assign runs the leader's decision for id and brings its assignments to
// the node, without a node sync.
func (h *harness) assign(t *testing.T, id string) {
	t.Helper()
	if err := h.lead(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.follow(t.Context(), h.store.AssignmentsPrefix(), h.rm.Slots()); err != nil {
		t.Fatal(err)
	}
}

// newNodeManager returns another manager for the harness's node, as a
// restart makes one.
func (h *harness) newNodeManager(t *testing.T, opts roles.Options) *agent.Agent {
	t.Helper()
	opts.Client, opts.Store, opts.Logger, opts.TaskControl = h.client, h.store, testLogger(t), h.fake
	opts.Node, opts.Identity, opts.Clock = h.opts.Node, h.opts.Identity, h.opts.Clock
	return roles.New(opts).NodeManager(h.rm.Lease())
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

func names(tasks []api.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.Name
	}
	return out
}

// counter is the value of the counter name in reg (of a histogram: how
// many it observed), summed over the series whose labels include labels
// (name, value, name, value...).
func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
					return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}) {
					continue series
				}
			}
			sum += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}
