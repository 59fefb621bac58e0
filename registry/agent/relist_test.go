package agent_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// Issue 30: the periodic pass syncs every controller from the cache and
// lists the containers again only once --relist-period has passed; a list
// that finds the cache wrong (an event Docker dropped) is counted.
func TestThePeriodicPassListsTheContainersOnlyEveryRelistPeriod(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, roles.Options{RelistPeriod: time.Minute, Registerer: reg})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil { // lists once
		t.Fatal(err)
	}
	lists := h.fake.Counts().List

	h.clock.Advance(30 * time.Second)
	if err := h.rm.Resync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Counts().List; got != lists {
		t.Errorf("%d container lists after a periodic pass within the relist period, want %d: it syncs from the cache", got, lists)
	}

	// Docker's event of a stop is lost: the cache still has it running
	web1 := h.fake.Tasks()[0].ID
	h.fake.SetState(web1, api.StateExited, 0)
	h.clock.Advance(30 * time.Second)
	if err := h.rm.Resync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Counts().List; got != lists+1 {
		t.Errorf("%d container lists once the relist period passed, want %d", got, lists+1)
	}
	if got := counter(t, reg, "replication_manager_cache_drift_total"); got != 1 {
		t.Errorf("cache drift counted %v, want 1: the list found web's container stopped", got)
	}
}

// A relist that finds the cache wrong fixes it, says once what differed,
// and the controller's next sync acts on the truth: web's container,
// stopped behind an event that never came, is replaced.
func TestARelistThatFindsDriftFixesTheCacheAndSaysWhatDiffered(t *testing.T) {
	var logs syncbuf.Buffer
	reg := prometheus.NewRegistry()
	h := newHarness(t, roles.Options{RelistPeriod: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Registerer: reg})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	web1 := h.fake.Tasks()[0]
	h.fake.SetState(web1.ID, api.StateExited, 0) // its die event is lost: no watch reads it

	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	validateSyncReplication(t, h.fake, 1, 0) // the cache says running: nothing to do

	h.clock.Advance(time.Minute)
	if err := h.rm.Resync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := counter(t, reg, "replication_manager_cache_drift_total"); got != 1 {
		t.Errorf("cache drift counted %v, want 1", got)
	}
	if got := h.cached("web"); len(got) != 1 || got[0].State != api.StateExited {
		t.Errorf("cache after the relist = %+v, want web-1 exited", got)
	}
	logged := logs.String()
	if n := strings.Count(logged, "the container list found the cache wrong"); n != 1 {
		t.Errorf("drift logged %d times, want once:\n%s", n, logged)
	}
	if want := "web-1: state running → exited"; !strings.Contains(logged, want) {
		t.Errorf("the drift log does not say %q:\n%s", want, logged)
	}

	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, task := range h.fake.Tasks() {
		if task.State == api.StateRunning {
			running++
		}
	}
	if running != 1 {
		t.Errorf("%d containers of web running after its sync, want 1: %+v", running, h.fake.Tasks())
	}
}

// On a converged host, the node's periodic pass syncs every controller
// from its caches: no container list within --relist-period, no other
// call to Docker, and no write to etcd, since no report changed.
func TestTheSteadyPeriodicPassCallsNoDockerAndWritesNothing(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, roles.Options{SyncPeriod: 20 * time.Millisecond, RelistPeriod: time.Hour, Registerer: reg})
	h.run(t)
	h.create(t, newController("web", 2))
	h.create(t, newController("db", 1))
	for _, id := range []string{"web", "db"} {
		testpoll.Until(t, waitTimeout, id+" ready", func() bool {
			st := h.status(t, id)
			return st != nil && st.ReadyReplicas == st.Replicas && st.Replicas > 0
		})
	}
	// let the last creates and their reports land
	testpoll.Until(t, waitTimeout, "no more creates", func() bool {
		before := h.fake.Counts()
		time.Sleep(100 * time.Millisecond)
		after := h.fake.Counts()
		return after.Create == before.Create && after.Delete == before.Delete
	})

	watch := h.client.Watch(t.Context(), h.store.Prefix()+"/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp := <-watch; !resp.Created {
		t.Fatalf("watch the host's keys: %v", resp.Err())
	}
	h.fake.Reset()
	syncs := syncCount(t, reg)
	testpoll.Until(t, waitTimeout, "ten periodic syncs of each controller", func() bool {
		return syncCount(t, reg) >= syncs+20
	})

	if got := h.fake.Counts(); got != (taskcontrol.FakeCounts{}) {
		t.Errorf("Docker calls during periodic passes = %+v (%v), want none", got, h.fake.Calls())
	}
	// a marker's put comes after every write the passes made
	marker := h.store.Prefix() + "/marker"
	if _, err := h.client.Put(t.Context(), marker, ""); err != nil {
		t.Fatal(err)
	}
	for resp := range watch {
		for _, ev := range resp.Events {
			if string(ev.Kv.Key) == marker {
				return
			}
			t.Errorf("etcd write during periodic passes: %s %s", ev.Type, ev.Kv.Key)
		}
	}
	t.Fatal("the watch ended before the marker")
}

// syncCount is how many syncs the node has finished.
func syncCount(t *testing.T, reg *prometheus.Registry) uint64 {
	t.Helper()
	return syncsBy(t, reg, "")
}
