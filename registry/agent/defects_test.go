package agent

// Tests of the defects an outside review found, each through the path
// where it happened (the planner's own are rows of TestPlan).

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// Defect 1: controllers/a/web holding id "web" managed web's containers.
func TestNestedKeyIsNotAController(t *testing.T) {
	h := newHarness(t, Options{})
	logs := &syncbuf.Buffer{}
	h.rm.logger = slog.New(slog.NewTextHandler(logs, nil))
	h.run(t)
	h.create(t, newController("web", 2))
	h.waitForNames(t, "web-1", "web-2")
	testpoll.Until(t, waitTimeout, "web's status", func() bool { st := h.status(t, "web"); return st != nil && st.Replicas == 2 })
	before := h.status(t, "web")

	nested := h.store.ControllersPrefix() + "a/web"
	data, err := api.Encode(newController("web", 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := h.client.Put(ctx, nested, string(data)); err != nil {
		t.Fatal(err)
	}
	// a later controller write is seen, so the nested one was too
	h.create(t, newController("marker", 1))
	h.waitForNames(t, "marker-1", "web-1", "web-2")
	if _, err := h.client.Delete(ctx, nested); err != nil {
		t.Fatal(err)
	}
	if err := h.store.DeleteController(ctx, "marker"); err != nil {
		t.Fatal(err)
	}
	h.waitForNames(t, "web-1", "web-2")

	if got := h.status(t, "web"); got.Replicas != 2 || got.ObservedRevision != before.ObservedRevision {
		t.Errorf("web's status = %+v, want 2 replicas at revision %d: the nested key must not write it", got, before.ObservedRevision)
	}
	resp, err := h.client.Get(ctx, h.store.StatusPrefix()+"a/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d status keys below status/controllers/a/, want none", resp.Count)
	}
	if n := strings.Count(logs.String(), nested); n != 1 {
		t.Errorf("the nested key is named in %d log lines, want one warning:\n%s", n, logs.String())
	}
}

func TestNestedKeysAreLeftOutOfTheListAndTheWatch(t *testing.T) {
	s := registry.NewStore(nil, "/registry")
	for key, want := range map[string]bool{
		"/registry/controllers/web":   true,
		"/registry/controllers/a/web": false,
		"/registry/controllers/":      false,
		"/registry/status/web":        false,
	} {
		if got := s.IsControllerKey(key); got != want {
			t.Errorf("IsControllerKey(%q) = %v, want %v", key, got, want)
		}
	}
	ev := s.DecodeEvent(registry.KV{Key: "/registry/controllers/a/web", ModRev: 9}, true)
	if !ev.Ignored || ev.Deleted {
		t.Errorf("decodeEvent of a nested delete = %+v, want it ignored", ev)
	}
}

// Defect 2: an older list landing after a newer one erased the manager's
// own create from the cache.
func TestAnOlderListLandingLastKeepsWhatANewerOneSaw(t *testing.T) {
	c := newTaskCache()
	now := time.Now()
	c.replace(nil, c.startList(), now)

	older := c.startList() // a slow list starts, before the create
	c.created(owned("new", "web", api.StateRunning))
	newer := c.startList()
	c.replace([]api.Task{owned("new", "web", api.StateRunning)}, newer, now)
	c.replace(nil, older, now) // the slow list lands last, without it

	if tasks, _ := c.list("web"); len(tasks) != 1 {
		t.Errorf("web = %v, want the container the manager created", tasks)
	}
}

// Defect 2, the other way round: a list started before a death hid it.
func TestAStaleListDoesNotHideADeath(t *testing.T) {
	c := newTaskCache()
	now := time.Now()
	c.replace([]api.Task{owned("a", "web", api.StateRunning)}, c.startList(), now)

	since := c.startList()
	c.observe(owned("a", "web", api.StateExited)) // the die event's inspect
	c.replace([]api.Task{owned("a", "web", api.StateRunning)}, since, now)

	if tasks, _ := c.list("web"); len(tasks) != 1 || tasks[0].State != api.StateExited {
		t.Errorf("web = %v, want a exited", tasks)
	}
	// and a container destroyed after the list started does not come back
	since = c.startList()
	c.deleted("a", now)
	c.replace([]api.Task{owned("a", "web", api.StateRunning)}, since, now)
	if tasks, _ := c.list("web"); len(tasks) != 0 {
		t.Errorf("web = %v, want a gone", tasks)
	}
}

func TestRelistsRunOneAtATime(t *testing.T) {
	h := newHarness(t, Options{})
	inList := make(chan struct{}, 2)
	release := make(chan struct{})
	h.fake.ListErr = func() error {
		inList <- struct{}{}
		<-release
		return nil
	}
	ctx := t.Context()
	errs := make(chan error, 2)
	go func() { errs <- h.rm.relistTasks(ctx) }()
	go func() { errs <- h.rm.relistTasks(ctx) }()
	<-inList
	select {
	case <-inList:
		t.Fatal("two container lists ran at once")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// Defect 6: with etcd away, the status write blocked the sync under the
// controller's lock, and a Crashed event blocked the replacement. A node
// heals a slot it runs without etcd: the slot is in its report already.
func TestEtcdAwayDoesNotHoldASync(t *testing.T) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: time.Second, Logger: nil})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	// the replica crashed a minute ago: its replacement is due at once
	fake := &taskcontrol.Fake{Now: func() time.Time { return time.Now().Add(-time.Minute) }}
	store := registry.NewStore(client, "/away")
	rm := New(store, fake, slog.New(slog.NewTextHandler(io.Discard, nil)),
		Options{EtcdTimeout: 200 * time.Millisecond, Node: NodeOptions{Name: harnessNode}})
	rm.registryID = testRegistryID
	rm.specs.replace([]registry.Spec{{ID: "web", Controller: newController("web", 1), ModRevision: 5, CreateRevision: 5}}, 5)
	// slot 1 is this node's, and its report says so, from before etcd went
	hash := api.TemplateHash(&newController("web", 1).DesiredState.TaskTemplate)
	a, err := json.Marshal(api.Assignment{Node: harnessNode, Revision: 5, TemplateHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	rm.slots.Reset([]registry.KV{{Key: store.AssignmentKey("web", 1), Value: a, ModRev: 6}}, 6)
	rm.states.loadReports(map[string]*api.NodeReport{"web": {Node: harnessNode, Status: api.ReplicationControllerStatus{ID: "web"}, Slots: []int{1}}})
	crashed, err := fake.Add(api.Task{Name: "web-1", Labels: map[string]string{"name": "web", api.LabelController: "web", api.LabelSlot: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	fake.SetState(crashed, api.StateExited, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := rm.relistTasks(ctx); err != nil {
		t.Fatal(err)
	}
	go rm.events.run(ctx)

	err = rm.syncSlots(ctx, "web")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("sync = %v, want the status write's deadline", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the sync waited for the test's own deadline: an etcd call has none")
	}
	if got := fake.Creates(); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("creates = %v, want the crashed replica replaced", got)
	}
	testpoll.Until(t, waitTimeout, "events dropped", func() bool { return testutil.ToFloat64(rm.metrics.eventsDropped) >= 1 })
}

// Defect 8: a dead container someone started again was still renamed or
// deleted after the inspect showed it running.
func TestADeadContainerStartedAgainIsCounted(t *testing.T) {
	h := newHarness(t, Options{})
	h.setSpec(newController("web", 1))
	id := h.addTask(t, "web", 1, api.StateExited)
	ctx := t.Context()
	if err := h.rm.relistTasks(ctx); err != nil {
		t.Fatal(err)
	}
	// docker start, unseen by the cache: the events are lost
	h.fake.SetState(id, api.StateRunning, 0)
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if c := h.fake.Counts(); c.Rename+c.Delete+c.Create != 0 {
		t.Errorf("calls %+v, want none: the container runs again", h.fake.Calls())
	}
	if st := h.status(t, "web"); st.Replicas != 1 {
		t.Errorf("status = %+v, want 1 replica", st)
	}
}

// Defect 11: the spec cache kept every deletion until the next full list,
// and the proven templates were never forgotten.
func TestADeletedControllerIsForgottenWithItsLastContainer(t *testing.T) {
	h := newHarness(t, Options{})
	h.setSpec(newController("web", 2))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.deleteSpec("web")
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if h.fake.Len() != 0 || h.rm.specs.wasDeleted("web") || h.rm.states.known("web") || h.status(t, "web") != nil {
		t.Errorf("after the cascade: %d containers, tombstone %v, record %v, status %+v; want all gone",
			h.fake.Len(), h.rm.specs.wasDeleted("web"), h.rm.states.known("web"), h.status(t, "web"))
	}
}

// Defect 5: deleted and created again while the manager was down, the old
// containers kept running with the old template.
func TestASpecCreatedAgainWhileDownReplacesTheOldContainers(t *testing.T) {
	h := newHarness(t, Options{})
	h.stopBackground()
	h.create(t, newController("web", 2))
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	h.waitForNames(t, "web-1", "web-2")
	testpoll.Until(t, waitTimeout, "web's status", func() bool { st := h.status(t, "web"); return st != nil && st.Replicas == 2 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	oldIDs := ids(h.fake.Tasks())

	// while no manager runs, the spec is deleted and created again with
	// another template
	if err := h.store.DeleteController(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	recreated := newController("web", 2)
	recreated.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "b"}}
	h.create(t, recreated)

	h.rm = h.newNodeManager(t, Options{})
	h.run(t)
	want := api.TemplateHash(&recreated.DesiredState.TaskTemplate)
	// the leader sees the delete and the create apart (the slots are
	// freed, then placed again) or, when its watch brings both before it
	// decides, together: a template change, rolled out one step per
	// monitorSeconds of the new containers' time, which the clock gives
	testpoll.Until(t, waitTimeout, "two containers of the new template", func() bool {
		h.clock.Advance(time.Second)
		tasks := h.fake.Tasks()
		if len(tasks) != 2 {
			return false
		}
		for _, task := range tasks {
			if task.Labels[api.LabelTemplateHash] != want || slices.Contains(oldIDs, task.ID) {
				return false
			}
		}
		return true
	})
}

func ids(tasks []api.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}
