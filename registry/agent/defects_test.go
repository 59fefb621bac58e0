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
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

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
		Options{EtcdTimeout: 200 * time.Millisecond, Node: NodeOptions{Name: testNode}})
	rm.registryID = testRegistryID
	rm.specs.replace([]registry.Spec{{ID: "web", Controller: newController("web", 1), ModRevision: 5, CreateRevision: 5}}, 5)
	// slot 1 is this node's, and its report says so, from before etcd went
	hash := api.TemplateHash(&newController("web", 1).DesiredState.TaskTemplate)
	a, err := json.Marshal(api.Assignment{Node: testNode, Revision: 5, TemplateHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	rm.slots.Reset([]registry.KV{{Key: store.AssignmentKey("web", 1), Value: a, ModRev: 6}}, 6)
	rm.states.loadReports(map[string]*api.NodeReport{"web": {Node: testNode, Status: api.ReplicationControllerStatus{ID: "web"}, Slots: []int{1}}})
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
