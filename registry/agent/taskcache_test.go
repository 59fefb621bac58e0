package agent

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/replication-manager/replication-manager/api"
)

func owned(id, rc, state string) api.Task {
	return api.Task{ID: id, Name: id, State: state, Labels: map[string]string{api.LabelController: rc}}
}

func TestTaskCacheReplaceReportsOnlyControllersThatChanged(t *testing.T) {
	c := newTaskCache()
	now := time.Now()
	c.replace([]api.Task{
		owned("a", "web", api.StateRunning),
		owned("b", "api", api.StateRunning),
		owned("c", "quiet", api.StateRunning),
		{ID: "x", Name: "not-ours", Labels: map[string]string{"name": "x"}},
	}, c.startList(), now)

	drift := c.replace([]api.Task{
		owned("a", "web", api.StateExited), // web: state changed
		owned("c", "quiet", api.StateRunning),
		owned("d", "db", api.StateRunning), // db: new; api: b is gone
	}, c.startList(), now)
	changed := drift.controllers
	slices.Sort(changed)
	if want := []string{"api", "db", "web"}; !slices.Equal(changed, want) {
		t.Errorf("changed = %v, want %v", changed, want)
	}
	// the log names each container that differed, and how
	got := drift.String()
	for _, want := range []string{"a: state running → exited", "d: unknown to the cache, listed running", "b: running in the cache, gone from the list"} {
		if !strings.Contains(got, want) {
			t.Errorf("drift %q does not say %q", got, want)
		}
	}
	if drift.containers != 3 {
		t.Errorf("drift counted %d containers, want 3", drift.containers)
	}
	if tasks, _ := c.list("api"); len(tasks) != 0 {
		t.Errorf("api still has %v", tasks)
	}
	if tasks, _ := c.list("x"); len(tasks) != 0 {
		t.Errorf("a container without the ownership label was cached: %v", tasks)
	}
	if tasks, _ := c.list("web"); len(tasks) != 1 || tasks[0].State != api.StateExited {
		t.Errorf("web = %v, want a exited", tasks)
	}
}

func TestEventsUpdateAKnownContainerWithoutAnInspect(t *testing.T) {
	c := newTaskCache()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c.replace(nil, c.startList(), t0)
	task := owned("a", "web", api.StateRunning)
	task.Name, task.Health, task.StartedAt = "web-1", api.HealthStarting, t0
	c.created(task)
	ev := func(action string) api.TaskEvent {
		return api.TaskEvent{Action: action, ID: "a", Name: "web-1", Labels: task.Labels, Time: t0.Add(2 * time.Second)}
	}
	get := func() api.Task {
		tasks, _ := c.list("web")
		if len(tasks) != 1 {
			t.Fatalf("web = %v, want one container", tasks)
		}
		return tasks[0]
	}

	healthy := ev("health_status")
	healthy.Health = api.HealthHealthy
	if r := c.event(healthy); r != eventChanged || get().Health != api.HealthHealthy {
		t.Errorf("health_status: %v, %+v; want changed, healthy", r, get())
	}
	if r := c.event(ev("create")); r != eventUnchanged {
		t.Errorf("create of a known container: %v, want unchanged", r)
	}
	if r := c.event(ev("pause")); r != eventChanged || get().State != api.StatePaused {
		t.Errorf("pause: %v, %+v", r, get())
	}
	if r := c.event(ev("unpause")); r != eventChanged || get().State != api.StateRunning {
		t.Errorf("unpause: %v, %+v", r, get())
	}
	die := ev("die")
	die.ExitCode = 3
	if r := c.event(die); r != eventChanged {
		t.Errorf("die: %v, want changed", r)
	}
	if got := get(); got.State != api.StateExited || got.ExitCode != 3 || !got.StartedAt.Equal(t0) || !got.FinishedAt.Equal(die.Time) {
		t.Errorf("after die: %+v, want exited with 3, started %s, finished %s", got, t0, die.Time)
	}
	renamed := ev("rename")
	renamed.Name, renamed.OldName = "web-dead-a", "web-1"
	if r := c.event(renamed); r != eventChanged || get().Name != "web-dead-a" {
		t.Errorf("rename: %v, %+v", r, get())
	}
	start := ev("start")
	start.Name, start.Time = "web-dead-a", t0.Add(time.Minute)
	if r := c.event(start); r != eventChanged {
		t.Errorf("start: %v, want changed", r)
	}
	if got := get(); got.State != api.StateRunning || got.Health != api.HealthStarting || !got.StartedAt.Equal(start.Time) {
		t.Errorf("after a start: %+v, want running, health starting, started %s", got, start.Time)
	}

	// what an event cannot tell
	for _, e := range []api.TaskEvent{
		{Action: "start", ID: "b", Name: "web-2", Labels: task.Labels, Time: t0},    // unknown container
		{Action: "health_status", ID: "a", Name: "web-dead-a", Labels: task.Labels}, // no health named
		{Action: "restart", ID: "a", Name: "web-dead-a", Labels: task.Labels, Time: t0},
	} {
		if r := c.event(e); r != eventInspect {
			t.Errorf("%s of %s: %v, want an inspect", e.Action, e.ID, r)
		}
	}
	// a container the manager removed is left alone
	c.deleted("a", t0)
	if r := c.event(ev("die")); r != eventUnchanged {
		t.Errorf("die of a removed container: %v, want unchanged", r)
	}
}

func TestADieOfAListedContainerLeavesItsTimesToTheInspect(t *testing.T) {
	c := newTaskCache()
	t0 := time.Now()
	c.replace([]api.Task{owned("a", "web", api.StateRunning)}, c.startList(), t0) // a list: no StartedAt
	die := api.TaskEvent{Action: "die", ID: "a", Name: "a", Labels: map[string]string{api.LabelController: "web"}, Time: t0, ExitCode: 1}
	if r := c.event(die); r != eventChanged {
		t.Fatalf("die: %v, want changed", r)
	}
	tasks, _ := c.list("web")
	if got := tasks[0]; got.State != api.StateExited || !got.FinishedAt.IsZero() {
		t.Errorf("after die: %+v, want exited without FinishedAt, so that inspectDead reads both times", got)
	}
	// the inspect's times are kept, though nothing else changed
	full := owned("a", "web", api.StateExited)
	full.StartedAt, full.FinishedAt, full.ExitCode = t0.Add(-time.Second), t0, 1
	c.observe(full)
	tasks, _ = c.list("web")
	if got := tasks[0]; !got.StartedAt.Equal(full.StartedAt) || !got.FinishedAt.Equal(full.FinishedAt) {
		t.Errorf("after the inspect: %+v, want its times", got)
	}
}

func TestEventsOfACreateUnderWayWaitForItsResult(t *testing.T) {
	c := newTaskCache()
	t0 := time.Now()
	c.replace(nil, c.startList(), t0)
	labels := map[string]string{api.LabelController: "web"}
	ev := func(action, id string, at time.Duration) api.TaskEvent {
		return api.TaskEvent{Action: action, ID: id, Name: "web-1", Labels: labels, Time: t0.Add(at)}
	}

	// the create's own events, then a crash, all before it returns
	c.creating("web-1")
	die := ev("die", "a", time.Second)
	die.ExitCode = 3
	for _, e := range []api.TaskEvent{ev("create", "a", 0), ev("start", "a", 0), die} {
		if r := c.event(e); r != eventHeld {
			t.Errorf("%s during the create: %v, want held", e.Action, r)
		}
	}
	changed, inspect := c.created(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateRunning, Health: api.HealthStarting, StartedAt: t0})
	if !changed || inspect {
		t.Errorf("created: changed %v, inspect %v; want changed (the die), no inspect", changed, inspect)
	}
	if unknown := c.createDone("web-1"); unknown != nil {
		t.Errorf("createDone: %v, want nothing to inspect", unknown)
	}
	tasks, _ := c.list("web")
	if len(tasks) != 1 || tasks[0].State != api.StateExited || tasks[0].ExitCode != 3 || !tasks[0].FinishedAt.Equal(die.Time) || !tasks[0].StartedAt.Equal(t0) {
		t.Errorf("web = %+v, want a exited with 3 at %s, started at %s", tasks, die.Time, t0)
	}
	// once the create returned, its container's events apply at once
	if r := c.event(ev("rename", "a", 2*time.Second)); r != eventUnchanged {
		t.Errorf("an event after the create: %v, want applied (unchanged)", r)
	}

	// a create that failed after the engine made the container: it is
	// inspected, unless its destroy was seen
	c.creating("web-2")
	c.event(api.TaskEvent{Action: "create", ID: "b", Name: "web-2", Labels: labels})
	c.creating("web-3")
	c.event(api.TaskEvent{Action: "create", ID: "c", Name: "web-3", Labels: labels})
	c.deleted("c", t0) // its destroy event
	if unknown := c.createDone("web-2"); !slices.Equal(unknown, []string{"b"}) {
		t.Errorf("createDone of a failed create: %v, want b to inspect", unknown)
	}
	if unknown := c.createDone("web-3"); unknown != nil {
		t.Errorf("createDone of a failed create whose container was destroyed: %v, want nothing", unknown)
	}
}

// A kill changes nothing a sync looks at: a known container is marked for
// the die that follows, and one the cache does not know costs no inspect
// (the die brings it).
func TestAKillEventIsNeverSyncedNorInspected(t *testing.T) {
	c := newTaskCache()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c.replace(nil, c.startList(), t0)
	task := owned("a", "web", api.StateRunning)
	task.Name, task.StartedAt = "web-1", t0
	c.created(task)
	if r := c.event(api.TaskEvent{Action: "kill", ID: "a", Name: "web-1", Labels: task.Labels, Time: t0}); r != eventUnchanged {
		t.Errorf("kill of a known container: %v, want unchanged", r)
	}
	if tasks, _ := c.list("web"); len(tasks) != 1 || !tasks[0].Killed {
		t.Errorf("web = %+v, want its container marked killed", tasks)
	}
	if r := c.event(api.TaskEvent{Action: "kill", ID: "b", Name: "web-2", Labels: task.Labels, Time: t0}); r != eventUnchanged {
		t.Errorf("kill of an unknown container: %v, want unchanged", r)
	}
}

func TestStaleInspectOfACreatedContainerIsIgnored(t *testing.T) {
	c := newTaskCache()
	labels := map[string]string{api.LabelController: "web"}
	c.replace(nil, c.startList(), time.Now())
	c.created(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateRunning})
	if c.observe(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateCreated}) {
		t.Error("an inspect from before the start replaced the running container")
	}
	tasks, _ := c.list("web")
	if len(tasks) != 1 || tasks[0].State != api.StateRunning {
		t.Errorf("cache = %+v, want web-1 running", tasks)
	}
}

// decoded is a listed container as a decode of the engine's answer gives
// it: every string a copy of its own.
func decoded(id, rc, slot string) api.Task {
	fresh := strings.Clone
	return api.Task{ID: id, Name: id, Image: fresh("demo:1"), ImageID: fresh("sha256:1"), State: fresh(api.StateRunning),
		Labels: map[string]string{fresh(api.LabelController): fresh(rc), fresh(api.LabelSlot): fresh(slot)}}
}

// TestTheCacheKeepsOneCopyOfTheStringsContainersRepeat: two containers
// listed with the same labels, image and state hold the same strings in
// the cache, not a copy each, however the task control decoded them.
func TestTheCacheKeepsOneCopyOfTheStringsContainersRepeat(t *testing.T) {
	// the second container comes as a list, an inspect or a create
	// (Docker's answers with an inspect) brings it
	for how, learn := range map[string]func(c *taskCache, first, second api.Task){
		"listed": func(c *taskCache, first, second api.Task) {
			c.replace([]api.Task{first, second}, c.startList(), time.Now())
		},
		"inspected": func(c *taskCache, first, second api.Task) {
			c.replace([]api.Task{first}, c.startList(), time.Now())
			c.observe(second)
		},
		"created": func(c *taskCache, first, second api.Task) {
			c.replace([]api.Task{first}, c.startList(), time.Now())
			c.creating(second.Name)
			c.created(second)
			c.createDone(second.Name)
		},
	} {
		t.Run(how, func(t *testing.T) {
			c := newTaskCache()
			first, second := decoded("a", "web", "1"), decoded("b", "web", "1")
			learn(c, first, second)
			tasks, _ := c.list("web")
			if len(tasks) != 2 {
				t.Fatalf("web = %v, want a and b", tasks)
			}
			same := func(what, x, y string) {
				t.Helper()
				if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
					t.Errorf("%s: %q and %q are two copies", what, x, y)
				}
			}
			a, b := tasks[0], tasks[1]
			same("image", a.Image, b.Image)
			same("image ID", a.ImageID, b.ImageID)
			same("state", a.State, b.State)
			for k, v := range a.Labels {
				var other string
				for k2 := range b.Labels {
					if k2 == k {
						other = k2
					}
				}
				same("label key", k, other)
				same("label "+k, v, b.Labels[k])
			}
			if unsafe.StringData(first.Labels[api.LabelController]) == unsafe.StringData(second.Labels[api.LabelController]) {
				t.Fatal("the test's two containers share their strings already")
			}
		})
	}
}

// TestContainersOfOneTemplateShareTheirLabelsInTheCache: the containers
// of one controller and template differ only in their slot label, so the
// cache keeps their other labels in one map; each task it hands out still
// has every label in a map of its own.
func TestContainersOfOneTemplateShareTheirLabelsInTheCache(t *testing.T) {
	c := newTaskCache()
	a, b := decoded("a", "web", "1"), decoded("b", "web", "2")
	other := decoded("c", "web", "3")
	other.Labels[api.LabelTemplateHash] = "newer"
	c.replace([]api.Task{a, b, other}, c.startList(), time.Now())

	base := func(id string) map[string]string { return c.tasks[id].labels.base }
	if reflect.ValueOf(base("a")).UnsafePointer() != reflect.ValueOf(base("b")).UnsafePointer() {
		t.Error("a and b, of one template, keep a label map each")
	}
	if reflect.ValueOf(base("a")).UnsafePointer() == reflect.ValueOf(base("c")).UnsafePointer() {
		t.Error("c, of another template, shares a's labels")
	}
	tasks, _ := c.list("web")
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].ID < tasks[j].ID })
	for i, want := range []api.Task{a, b, other} {
		if !maps.Equal(tasks[i].Labels, want.Labels) {
			t.Errorf("%s: labels %v, want %v", want.ID, tasks[i].Labels, want.Labels)
		}
	}
	tasks[0].Labels[api.LabelTemplateHash] = "changed by a reader"
	if again, _ := c.list("web"); slices.ContainsFunc(again, func(t api.Task) bool {
		return t.Labels[api.LabelTemplateHash] == "changed by a reader"
	}) {
		t.Error("a reader's change to its task's labels reached the cache")
	}
}

// An inspect that finds a container still running, since the start the
// cache knows, adds its word to the container (windows.go) without
// counting as a change; one that finds it started again since (its start
// event not applied yet) is a change, and its older word does not cover
// the new start.
func TestAnInspectAddsTheEnginesWordThatAContainerRuns(t *testing.T) {
	c, labels, started := cacheWithOneRunning()

	checked := started.Add(6 * time.Second)
	if c.observe(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateRunning, StartedAt: started, CheckedAt: checked}) {
		t.Error("an inspect that found the container as the cache has it counted as a change")
	}
	tasks, _ := c.list("web")
	if len(tasks) != 1 || !tasks[0].CheckedAt.Equal(checked) || !monitored(tasks[0], 5*time.Second) {
		t.Fatalf("cache = %+v, want web-1 checked at %s, through a 5s window", tasks, checked)
	}

	restarted := started.Add(7 * time.Second)
	if !c.observe(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateRunning, StartedAt: restarted, CheckedAt: restarted.Add(time.Second)}) {
		t.Error("an inspect that found the container started again did not count as a change")
	}
	tasks, _ = c.list("web")
	if len(tasks) != 1 || !tasks[0].StartedAt.Equal(restarted) || monitored(tasks[0], 5*time.Second) {
		t.Errorf("cache = %+v, want web-1 started at %s, its window not covered", tasks, restarted)
	}
}

// An inspect that finds a container dead after its kill event, before
// its die event, keeps the kill: the death is someone's doing (a node's
// delete, docker rm -f), not a crash, whatever the inspect says.
func TestAnInspectBetweenAKillAndItsDieKeepsTheKill(t *testing.T) {
	c, labels, started := cacheWithOneRunning()
	c.event(api.TaskEvent{ID: "a", Name: "web-1", Action: "kill", Labels: labels, Time: started.Add(5 * time.Second)})

	died := started.Add(6 * time.Second)
	c.observe(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateExited, StartedAt: started, FinishedAt: died, ExitCode: 137})
	c.event(api.TaskEvent{ID: "a", Name: "web-1", Action: "die", Labels: labels, Time: died, ExitCode: 137})
	tasks, _ := c.list("web")
	if len(tasks) != 1 || tasks[0].State != api.StateExited || !tasks[0].Killed {
		t.Errorf("cache = %+v, want web-1 exited and killed", tasks)
	}
}

// A relist that sees a container exited after its kill event, before its
// die event, keeps the kill too: the same rule as an inspect's.
func TestAListBetweenAKillAndItsDieKeepsTheKill(t *testing.T) {
	c, labels, started := cacheWithOneRunning()
	c.event(api.TaskEvent{ID: "a", Name: "web-1", Action: "kill", Labels: labels, Time: started.Add(5 * time.Second)})

	died := started.Add(6 * time.Second)
	c.replace([]api.Task{{ID: "a", Name: "web-1", Labels: labels, State: api.StateExited}}, c.startList(), died)
	c.event(api.TaskEvent{ID: "a", Name: "web-1", Action: "die", Labels: labels, Time: died, ExitCode: 137})
	tasks, _ := c.list("web")
	if len(tasks) != 1 || tasks[0].State != api.StateExited || !tasks[0].Killed {
		t.Errorf("cache = %+v, want web-1 exited and killed", tasks)
	}
}

// cacheWithOneRunning is a listed cache holding web-1 (id "a"), which the
// manager created and which runs since started.
func cacheWithOneRunning() (c *taskCache, labels map[string]string, started time.Time) {
	c = newTaskCache()
	labels = map[string]string{api.LabelController: "web"}
	started = time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	c.replace(nil, c.startList(), started)
	c.created(api.Task{ID: "a", Name: "web-1", Labels: labels, State: api.StateRunning, StartedAt: started})
	return c, labels, started
}
