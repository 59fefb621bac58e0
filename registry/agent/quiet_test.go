package agent_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// The periodic pass's short way (quiet.go): a controller whose last sync
// found nothing to do, and whose inputs have not changed since, is found
// unchanged without planning again. A wake-up makes a full sync; so does a
// container that died in the cache, or a new spec in it, without one (the
// event came, its wake-up went missing): the safety net holds, and the
// dead container is replaced, the new replica created.
func TestAPeriodicSyncSkipsOnlyACalmControllerWhoseInputsDidNotChange(t *testing.T) {
	h, reg := syncedOnce(t, "web", 2)
	unchanged := func() uint64 { return syncsBy(t, reg, "unchanged") }
	// steps until a sync finds web unchanged: the first containers'
	// rollout completes once they have run ready a while, and until then
	// each sync has something to wait for
	untilCalm := func() {
		t.Helper()
		for i, before := 0, unchanged(); unchanged() == before; i++ {
			if i == 20 {
				t.Fatalf("no sync found web unchanged after %d steps", i)
			}
			h.clock.Advance(time.Second)
			if err := h.step(t.Context(), "web"); err != nil {
				t.Fatal(err)
			}
		}
	}
	untilCalm()
	skipped := unchanged()
	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	if got := unchanged(); got != skipped+1 {
		t.Fatalf("syncs found unchanged = %d after one more periodic sync, want %d", got, skipped+1)
	}
	// the pass itself finds it unchanged, and queues nothing
	h.rm.Drain()
	if err := h.rm.Resync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, queued := unchanged(), h.rm.QueueLen(); got != skipped+2 || queued != 0 {
		t.Fatalf("after a periodic pass, %d syncs found unchanged and %d controllers queued; want %d and none", got, queued, skipped+2)
	}
	skipped = unchanged()

	// a wake-up (a pull that ended, a timer, an event) is a full sync:
	// not every input has a version
	h.rm.Enqueue("web")
	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	if got := unchanged(); got != skipped {
		t.Errorf("the sync after a wake-up was found unchanged")
	}

	// web-1 dies: the cache takes in its event, whose wake-up goes missing
	dead := h.fake.Tasks()[0]
	h.fake.SetState(dead.ID, api.StateExited, 1)
	h.rm.TaskEvent(api.TaskEvent{Action: "die", ID: dead.ID, Name: dead.Name, Labels: dead.Labels, Time: h.clock.Now(), ExitCode: 1})
	h.fake.Reset()
	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	if got := unchanged(); got != skipped {
		t.Errorf("the periodic sync after %s died was found unchanged: its containers changed", dead.Name)
	}
	if renames := h.fake.Renames(); len(renames) != 1 {
		t.Errorf("renames after %s died = %v, want one: kept for inspection, out of its slot", dead.Name, renames)
	}
	for i := 0; len(h.fake.Creates()) == 0; i++ { // the crash's backoff first
		if i == 20 {
			t.Fatalf("no replacement of %s after %d more syncs (calls %v)", dead.Name, i, h.fake.Calls())
		}
		h.clock.Advance(time.Second)
		if err := h.step(t.Context(), "web"); err != nil {
			t.Fatal(err)
		}
	}

	// a new spec in the cache, its wake-up missing too: a new revision
	untilCalm()
	h.fake.Reset()
	h.setSpec(newController("web", 3))
	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	if creates := h.fake.Creates(); len(creates) != 1 {
		t.Errorf("creates after web was scaled to 3 = %v, want one", creates)
	}
}

// A controller with no slot on this node writes no report here, and its
// periodic syncs take the short way as well.
func TestAControllerWithNoSlotHereIsFoundUnchangedToo(t *testing.T) {
	h, reg := syncedOnce(t, "idle", 0)
	for i := 0; syncsBy(t, reg, "unchanged") == 0; i++ {
		if i == 5 {
			t.Fatalf("no sync of a controller of 0 replicas found it unchanged after %d steps", i)
		}
		h.clock.Advance(time.Second)
		if err := h.step(t.Context(), "idle"); err != nil {
			t.Fatal(err)
		}
	}
}

// syncedOnce is a harness that lists the containers only hourly, with
// controller id of replicas synced once, and its metrics' registry.
func syncedOnce(t *testing.T, id string, replicas int) (*harness, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	h := newHarness(t, roles.Options{RelistPeriod: time.Hour, Registerer: reg})
	h.setSpec(newController(id, replicas))
	if err := h.sync(t, id); err != nil {
		t.Fatal(err)
	}
	return h, reg
}

// syncsBy is how many syncs the node has finished with result; "": with
// any.
func syncsBy(t *testing.T, reg *prometheus.Registry, result string) uint64 {
	t.Helper()
	var labels []string
	if result != "" {
		labels = []string{"result", result}
	}
	return uint64(counter(t, reg, "replication_manager_sync_duration_seconds", labels...))
}
