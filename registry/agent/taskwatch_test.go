package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testclock"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// followEvents runs the container watch (list, then the events) until the
// test ends, and waits for its list.
func (h *harness) followEvents(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.rm.FollowTasks(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	testpoll.Until(t, waitTimeout, "the container list", h.rm.TasksSynced)
}

// cached returns the cache's containers of controller id.
func (h *harness) cached(id string) []api.Task {
	return h.rm.CachedTasks(id)
}

// eventsApplied waits until the watch has applied every event so far:
// it adds a container by hand, whose event comes after them.
func (h *harness) eventsApplied(t *testing.T, marker string) {
	t.Helper()
	if _, err := h.fake.Add(api.Task{Name: marker, Labels: map[string]string{api.LabelController: marker}}); err != nil {
		t.Fatal(err)
	}
	testpoll.Until(t, waitTimeout, "the event of "+marker, func() bool { return len(h.cached(marker)) == 1 })
}

// A scale 0→3→0, with health checks that pass, costs no inspect: the
// events of the manager's own containers update the cache from what they
// tell. Only a container made by hand, which the cache does not know, is
// inspected.
func TestTheManagersOwnContainersEventsCostNoInspect(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.followEvents(t)
	ctx := t.Context()
	rc := newController("web", 3)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HealthCheck = &api.HealthCheck{Test: api.Command{"/task", "healthcheck"}}
	h.setSpec(rc)
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	testpoll.Until(t, waitTimeout, "3 containers cached", func() bool { return len(h.cached("web")) == 3 })
	for _, task := range h.fake.Tasks() {
		h.fake.SetHealth(task.ID, api.HealthHealthy)
	}
	testpoll.Until(t, waitTimeout, "3 healthy containers cached", func() bool {
		n := 0
		for _, task := range h.cached("web") {
			if task.Ready() {
				n++
			}
		}
		return n == 3
	})

	rc.DesiredState.Replicas = 0
	h.setSpec(rc)
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if n := h.fake.Len(); n != 0 {
		t.Fatalf("%d containers left after the scale to 0", n)
	}
	h.eventsApplied(t, "by-hand")
	c := h.fake.Counts()
	if c.Create != 3 || c.Delete != 3 {
		t.Errorf("%d creates and %d deletes, want 3 and 3", c.Create, c.Delete)
	}
	if c.Inspect != 1 {
		t.Errorf("%d inspects in a 0→3→0 (calls %q), want 1: the container made by hand", c.Inspect, h.fake.Calls())
	}
	if len(h.cached("web")) != 0 {
		t.Errorf("cache = %+v, want no container of web", h.cached("web"))
	}
}

// A die event's exit code and time reach the crash-loop history without
// an inspect: the container started when the create said, and died when
// the event says.
func TestADieEventsExitCodeAndTimeReachTheCrashLoopHistory(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.followEvents(t)
	ctx := t.Context()
	h.setSpec(newController("web", 1))
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	tasks := h.fake.Tasks()
	if len(tasks) != 1 {
		t.Fatalf("containers %+v, want one", tasks)
	}
	started := tasks[0].StartedAt
	h.clock.Advance(2 * time.Second)
	died := h.clock.Now()
	h.fake.Reset()
	h.fake.SetState(tasks[0].ID, api.StateExited, 3)
	testpoll.Until(t, waitTimeout, "the death cached", func() bool {
		cached := h.cached("web")
		return len(cached) == 1 && cached[0].State == api.StateExited
	})
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	exitCode, at, ranFor, crashed := h.rm.LastCrash("web")
	if !crashed {
		t.Fatal("no crash in the history")
	}
	if exitCode != 3 || !at.Equal(died) || ranFor != died.Sub(started) {
		t.Errorf("crash: exit code %d at %s after %s, want exit code 3 at %s after %s", exitCode, at, ranFor, died, died.Sub(started))
	}
	h.eventsApplied(t, "by-hand") // the dead container's rename, too
	if c := h.fake.Counts(); c.Inspect != 1 {
		t.Errorf("%d inspects (calls %q), want 1: the container made by hand", c.Inspect, h.fake.Calls())
	}
}

// crashingCreates is a task control whose containers die as their create
// returns: their die event comes before the manager has the create's
// result.
type crashingCreates struct {
	*taskcontrol.Fake
	clock *testclock.Clock
}

func (c *crashingCreates) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	t, err := c.Fake.CreateTask(ctx, spec)
	if err == nil {
		c.clock.Advance(time.Second)
		c.SetState(t.ID, api.StateExited, 3)
	}
	return t, err
}

// A container that dies before its create returns is cached dead, with
// its exit code and times, and costs no inspect either.
func TestADeathBeforeTheCreateReturnsIsNotLost(t *testing.T) {
	crashing := &crashingCreates{}
	h := newHarness(t, roles.Options{TaskControl: crashing})
	crashing.Fake, crashing.clock = h.fake, h.clock
	h.followEvents(t)
	h.setSpec(newController("web", 1))
	if err := h.step(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	testpoll.Until(t, waitTimeout, "the container cached dead", func() bool {
		cached := h.cached("web")
		return len(cached) == 1 && cached[0].State == api.StateExited
	})
	got := h.cached("web")[0]
	if got.ExitCode != 3 || got.FinishedAt.Sub(got.StartedAt) != time.Second {
		t.Errorf("cached %+v, want exit code 3 a second after the start", got)
	}
	h.eventsApplied(t, "by-hand")
	if c := h.fake.Counts(); c.Inspect != 1 {
		t.Errorf("%d inspects (calls %q), want 1: the container made by hand", c.Inspect, h.fake.Calls())
	}
}

// A container that dies on its own a second after it started is a crash,
// and its replacement waits for the backoff; one that someone killed or
// removed (docker kill, stop, rm -f: a kill event before its die) is no
// crash, and is replaced at once; it is removed, not kept for inspection
// (a rename racing a docker rm -f can leave the engine holding the slot's
// name).
func TestAKilledContainerIsNoCrash(t *testing.T) {
	for _, tt := range []struct {
		name        string
		events      []string
		crash       bool
		replacement bool
		kept        bool
	}{
		{"died on its own", []string{"die"}, true, false, true},
		{"killed by someone", []string{"kill", "die"}, false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, roles.Options{})
			ctx := t.Context()
			h.setSpec(newController("web", 1))
			if err := h.sync(t, "web"); err != nil {
				t.Fatal(err)
			}
			task := h.fake.Tasks()[0]
			h.clock.Advance(time.Second)
			h.fake.SetState(task.ID, api.StateExited, 137)
			for _, action := range tt.events {
				h.rm.TaskEvent(api.TaskEvent{Action: action, ID: task.ID, Name: task.Name, Labels: task.Labels,
					Time: h.clock.Now(), ExitCode: 137})
			}
			if err := h.step(ctx, "web"); err != nil {
				t.Fatal(err)
			}
			if _, _, _, crashed := h.rm.LastCrash("web"); crashed != tt.crash {
				t.Errorf("counted as a crash: %v, want %v", crashed, tt.crash)
			}
			if replaced := len(h.fake.Creates()) == 2; replaced != tt.replacement {
				t.Errorf("replaced at once: %v (creates %v), want %v", replaced, h.fake.Creates(), tt.replacement)
			}
			if kept := len(h.fake.Renames()) == 1 && len(h.fake.Deletes()) == 0; kept != tt.kept {
				t.Errorf("kept for inspection: %v (renames %v, deletes %v), want %v", kept, h.fake.Renames(), h.fake.Deletes(), tt.kept)
			}
		})
	}
}
