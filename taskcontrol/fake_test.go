package taskcontrol_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// Both task controls satisfy what the manager needs; the check lives here
// because taskcontrol itself must not import registry.
var (
	_ agent.TaskControlInterface = (*taskcontrol.Docker)(nil)
	_ agent.TaskControlInterface = (*taskcontrol.Fake)(nil)
	_ fullTaskControl            = (*taskcontrol.Docker)(nil)
	_ fullTaskControl            = (*taskcontrol.Fake)(nil)
)

// fullTaskControl is every method Docker has, so that the fake keeps up
// with it beyond what the manager uses today.
type fullTaskControl interface {
	agent.TaskControlInterface
	RenameTask(ctx context.Context, id, newName string) error
	InspectTask(ctx context.Context, id string) (api.Task, error)
	Events(ctx context.Context, labelKey string) (<-chan api.TaskEvent, <-chan error)
	Ping(ctx context.Context) error
	Close() error
}

var epoch = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func newFake() *taskcontrol.Fake {
	return &taskcontrol.Fake{Now: func() time.Time { return epoch }}
}

func spec(rc string, slot int) api.TaskSpec {
	return api.TaskSpec{
		Name: fmt.Sprintf("%s-%d", rc, slot),
		Labels: map[string]string{
			"name":              rc,
			api.LabelController: rc,
			api.LabelSlot:       fmt.Sprint(slot),
		},
		Container: api.Container{Image: "demo-task:latest"},
	}
}

func mustCreate(t *testing.T, f *taskcontrol.Fake, s api.TaskSpec) api.Task {
	t.Helper()
	task, err := f.CreateTask(t.Context(), s)
	if err != nil {
		t.Fatalf("CreateTask(%s): %v", s.Name, err)
	}
	return task
}

func names(tasks []api.Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return out
}

func TestFakeCreateStartsARunningTask(t *testing.T) {
	f := newFake()
	s := spec("web", 1)
	got := mustCreate(t, f, s)

	if len(got.ID) != 64 {
		t.Errorf("ID: got %q, want 64 hex digits", got.ID)
	}
	want := api.Task{
		ID: got.ID, Name: "web-1", Labels: s.Labels, Image: "demo-task:latest", ImageID: taskcontrol.FakeImageID("demo-task:latest"),
		State: api.StateRunning, Created: epoch, StartedAt: epoch,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CreateTask: got %+v, want %+v", got, want)
	}
	if !got.Ready() {
		t.Error("a new fake task is not ready")
	}

	// Neither the spec's labels nor a returned task's alias the fake's.
	s.Labels["name"] = "changed"
	got.Labels["name"] = "changed too"
	inspected, err := f.InspectTask(t.Context(), got.ID)
	if err != nil {
		t.Fatalf("InspectTask: %v", err)
	}
	if inspected.Labels["name"] != "web" {
		t.Errorf("label name after callers changed their maps: got %q, want web", inspected.Labels["name"])
	}
}

func TestFakeCreateRefusesATakenName(t *testing.T) {
	f := newFake()
	mustCreate(t, f, spec("web", 1))
	_, err := f.CreateTask(t.Context(), spec("web", 1))
	if !errors.Is(err, api.ErrTaskNameConflict) {
		t.Fatalf("second create of web-1: got %v, want ErrTaskNameConflict", err)
	}
	if got := f.Len(); got != 1 {
		t.Errorf("containers after the conflict: got %d, want 1", got)
	}
	if got, want := f.Creates(), []string{"web-1", "web-1"}; !slices.Equal(got, want) {
		t.Errorf("Creates: got %q, want %q (failed calls are recorded)", got, want)
	}
}

func TestFakeErrorInjection(t *testing.T) {
	boom := errors.New("boom")
	f := newFake()
	var failCreates atomic.Bool
	failCreates.Store(true)
	f.CreateErr = func(s api.TaskSpec) error {
		if failCreates.Load() {
			return fmt.Errorf("%w: %s", taskcontrol.ErrImageNotFound, s.Container.Image)
		}
		return nil
	}
	f.ListErr = func() error { return boom }
	f.DeleteErr = func(string) error { return boom }
	f.RenameErr = func(string, string) error { return boom }
	f.InspectErr = func(string) error { return boom }

	_, err := f.CreateTask(t.Context(), spec("web", 1))
	if got, want := fmt.Sprint(err), "create web-1: no such image: demo-task:latest"; got != want {
		t.Errorf("create with a missing image: got %q, want %q", got, want)
	}
	if !errors.Is(err, taskcontrol.ErrImageNotFound) {
		t.Errorf("create error %v does not wrap ErrImageNotFound", err)
	}
	if f.Len() != 0 {
		t.Errorf("a failed create left %d containers", f.Len())
	}

	failCreates.Store(false)
	task := mustCreate(t, f, spec("web", 1))

	if _, err := f.ListTasks(t.Context(), nil); !errors.Is(err, boom) {
		t.Errorf("ListTasks: got %v, want boom", err)
	}
	if err := f.DeleteTask(t.Context(), task.ID); !errors.Is(err, boom) {
		t.Errorf("DeleteTask: got %v, want boom", err)
	}
	if err := f.RenameTask(t.Context(), task.ID, "web-x"); !errors.Is(err, boom) {
		t.Errorf("RenameTask: got %v, want boom", err)
	}
	if _, err := f.InspectTask(t.Context(), task.ID); !errors.Is(err, boom) {
		t.Errorf("InspectTask: got %v, want boom", err)
	}
	if got := names(f.Tasks()); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("tasks after failed calls: got %q, want [web-1]", got)
	}
	want := taskcontrol.FakeCounts{List: 1, Create: 2, Delete: 1, Rename: 1, Inspect: 1}
	if got := f.Counts(); got != want {
		t.Errorf("Counts: got %+v, want %+v", got, want)
	}
}

func TestFakeCancelledContext(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.CreateTask(ctx, spec("web", 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateTask with a cancelled context: got %v, want context.Canceled", err)
	}
	if f.Len() != 0 {
		t.Errorf("a cancelled create left %d containers", f.Len())
	}
}

func TestFakeListTasksBySelector(t *testing.T) {
	f := newFake()
	for slot := 1; slot <= 3; slot++ {
		mustCreate(t, f, spec("web", slot))
	}
	mustCreate(t, f, spec("db", 1))
	// Started by hand: the user's labels, not the manager's.
	if _, err := f.Add(api.Task{Name: "manual", Labels: map[string]string{"name": "web"}}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	web2 := mustInspectByName(t, f, "web-2")
	f.SetState(web2.ID, api.StateExited, 1)

	tests := []struct {
		name     string
		selector map[string]string
		want     []string
	}{
		{"controller", map[string]string{api.LabelController: "web"}, []string{"web-1", "web-2", "web-3"}},
		{"controller and slot", map[string]string{api.LabelController: "web", api.LabelSlot: "3"}, []string{"web-3"}},
		{"user label only (scan)", map[string]string{"name": "web"}, []string{"manual", "web-1", "web-2", "web-3"}},
		{"unknown controller", map[string]string{api.LabelController: "nope"}, nil},
		{"empty value", map[string]string{"name": ""}, nil},
		{"everything", nil, []string{"db-1", "manual", "web-1", "web-2", "web-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.ListTasks(t.Context(), tt.selector)
			if err != nil {
				t.Fatalf("ListTasks: %v", err)
			}
			if !slices.Equal(names(got), tt.want) {
				t.Errorf("ListTasks(%v): got %q, want %q", tt.selector, names(got), tt.want)
			}
		})
	}

	exited := mustInspectByName(t, f, "web-2")
	if exited.State != api.StateExited || exited.ExitCode != 1 || exited.FinishedAt != epoch || exited.Active() {
		t.Errorf("web-2 after SetState: got %+v, want exited, code 1, finished at %s, not active", exited, epoch)
	}
}

func mustInspectByName(t *testing.T, f *taskcontrol.Fake, name string) api.Task {
	t.Helper()
	for _, task := range f.Tasks() {
		if task.Name == name {
			return task
		}
	}
	t.Fatalf("no task named %s", name)
	return api.Task{}
}

func TestFakeDeleteIsIdempotent(t *testing.T) {
	f := newFake()
	task := mustCreate(t, f, spec("web", 1))
	for i := range 2 {
		if err := f.DeleteTask(t.Context(), task.ID); err != nil {
			t.Fatalf("delete #%d: %v", i+1, err)
		}
	}
	if _, err := f.InspectTask(t.Context(), task.ID); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("inspect after delete: got %v, want ErrTaskNotFound", err)
	}
	list, err := f.ListTasks(t.Context(), map[string]string{api.LabelController: "web"})
	if err != nil || len(list) != 0 {
		t.Errorf("list after delete: got %v, %v; want none", names(list), err)
	}
	// The name is free again.
	mustCreate(t, f, spec("web", 1))
	if got, want := f.Deletes(), []string{task.ID, task.ID}; !slices.Equal(got, want) {
		t.Errorf("Deletes: got %q, want %q", got, want)
	}
}

func TestFakeRename(t *testing.T) {
	f := newFake()
	one := mustCreate(t, f, spec("web", 1))
	mustCreate(t, f, spec("web", 2))

	if err := f.RenameTask(t.Context(), one.ID, "web-2"); !errors.Is(err, api.ErrTaskNameConflict) {
		t.Errorf("rename onto a taken name: got %v, want ErrTaskNameConflict", err)
	}
	if err := f.RenameTask(t.Context(), "missing", "x"); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("rename a missing task: got %v, want ErrTaskNotFound", err)
	}
	if err := f.RenameTask(t.Context(), one.ID, "web-1-dead"); err != nil {
		t.Fatalf("rename: %v", err)
	}
	// The slot's name is free: a replacement can take it.
	mustCreate(t, f, spec("web", 1))
	got := names(f.Tasks())
	if want := []string{"web-1", "web-1-dead", "web-2"}; !slices.Equal(got, want) {
		t.Errorf("tasks: got %q, want %q", got, want)
	}
	// Renaming keeps the labels, so the index still finds the task.
	list, err := f.ListTasks(t.Context(), map[string]string{api.LabelController: "web"})
	if err != nil || len(list) != 3 {
		t.Errorf("list after rename: got %q, %v; want 3 tasks", names(list), err)
	}
	want := []string{"create web-1", "create web-2", "rename " + one.ID + " web-2", "rename missing x",
		"rename " + one.ID + " web-1-dead", "create web-1", "list"}
	if got := f.Calls(); !slices.Equal(got, want) {
		t.Errorf("Calls: got %q, want %q", got, want)
	}
	f.Reset()
	if got := f.Calls(); len(got) != 0 || f.Counts() != (taskcontrol.FakeCounts{}) {
		t.Errorf("after Reset: calls %q, counts %+v; want none", got, f.Counts())
	}
}

func TestFakeAddAndHealth(t *testing.T) {
	f := newFake()
	if _, err := f.Add(api.Task{Name: "web-1"}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if _, err := f.Add(api.Task{Name: "web-1"}); !errors.Is(err, api.ErrTaskNameConflict) {
		t.Errorf("Add of a taken name: got %v, want ErrTaskNameConflict", err)
	}
	id, err := f.Add(api.Task{ID: "abc", Name: "hc", State: api.StateRunning, Health: api.HealthStarting})
	if err != nil || id != "abc" {
		t.Fatalf("Add with an ID: got %q, %v; want abc", id, err)
	}
	task := mustInspectByName(t, f, "hc")
	if task.Ready() {
		t.Error("a starting task is ready")
	}
	f.SetHealth(id, api.HealthHealthy)
	if task := mustInspectByName(t, f, "hc"); !task.Ready() {
		t.Errorf("a healthy running task is not ready: %+v", task)
	}
	f.SetState(id, api.StateExited, 137)
	f.SetState(id, api.StateRunning, 0)
	if task := mustInspectByName(t, f, "hc"); task.Health != api.HealthStarting {
		t.Errorf("health after a restart: got %q, want starting", task.Health)
	}
	if f.SetState("missing", api.StateExited, 0) || f.SetHealth("missing", api.HealthHealthy) {
		t.Error("SetState or SetHealth of a missing task reported true")
	}
	if got := f.Calls(); len(got) != 0 {
		t.Errorf("helpers were recorded as calls: %q", got)
	}
}

func TestFakeCreateTaskHealthFromTheSpec(t *testing.T) {
	tests := []struct {
		name string
		hc   *api.HealthCheck
		want string
	}{
		{"no health check: the fake knows no image's", nil, api.HealthNone},
		{"a health check", &api.HealthCheck{Test: api.Command{"/task", "healthcheck"}}, api.HealthStarting},
		{"a disabled health check", &api.HealthCheck{Test: api.Command{"NONE"}}, api.HealthNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			s := spec("web", 1)
			s.Container.HealthCheck = tt.hc
			task := mustCreate(t, f, s)
			if task.Health != tt.want {
				t.Errorf("created task health: got %q, want %q", task.Health, tt.want)
			}
			if got := mustInspectByName(t, f, "web-1"); got.Health != tt.want || got.Ready() != (tt.want == api.HealthNone) {
				t.Errorf("inspected task: health %q, ready %v; want %q, ready %v", got.Health, got.Ready(), tt.want, tt.want == api.HealthNone)
			}
			if tt.want == api.HealthStarting {
				f.SetHealth(task.ID, api.HealthHealthy)
				if got := mustInspectByName(t, f, "web-1"); !got.Ready() {
					t.Errorf("after SetHealth(healthy): %+v is not ready", got)
				}
			}
		})
	}
}

func TestFakeEvents(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, errs := f.Events(ctx, api.LabelController)

	task := mustCreate(t, f, spec("web", 1))
	if _, err := f.Add(api.Task{Name: "manual"}); err != nil { // no controller label: filtered out
		t.Fatalf("Add: %v", err)
	}
	f.SetHealth(task.ID, api.HealthHealthy)
	f.SetState(task.ID, api.StatePaused, 0)
	f.SetState(task.ID, api.StateRunning, 0)
	f.SetState(task.ID, api.StateExited, 3)
	if err := f.RenameTask(t.Context(), task.ID, "web-1-dead"); err != nil {
		t.Fatalf("RenameTask: %v", err)
	}
	if err := f.DeleteTask(t.Context(), task.ID); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	stop := errors.New("connection lost")
	f.FailEvents(stop)

	// what Docker's events carry: the name, image and time, a die's exit
	// code, a health_status's health, a rename's old name
	name := "web-1"
	want := []api.TaskEvent{
		{Action: "create"},
		{Action: "start"},
		{Action: "health_status", Health: api.HealthHealthy},
		{Action: "pause"},
		{Action: "unpause"},
		{Action: "die", ExitCode: 3},
		{Action: "rename", OldName: "web-1"},
		{Action: "destroy"},
	}
	var got []api.TaskEvent
	for ev := range events {
		if ev.ID != task.ID || ev.Labels[api.LabelController] != "web" {
			t.Errorf("event %+v: want ID %s and the controller label", ev, task.ID)
		}
		if ev.Action == "rename" {
			name = "web-1-dead"
		}
		if ev.Name != name || ev.Image != "demo-task:latest" || !ev.Time.Equal(epoch) {
			t.Errorf("%s event: name %q, image %q, time %s; want %q, demo-task:latest, %s", ev.Action, ev.Name, ev.Image, ev.Time, name, epoch)
		}
		got = append(got, api.TaskEvent{Action: ev.Action, ExitCode: ev.ExitCode, Health: ev.Health, OldName: ev.OldName})
	}
	if !slices.EqualFunc(got, want, func(a, b api.TaskEvent) bool { return reflect.DeepEqual(a, b) }) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	if err := <-errs; !errors.Is(err, stop) {
		t.Errorf("stream error: got %v, want %v", err, stop)
	}
}

func TestFakeIsSafeForConcurrentUse(t *testing.T) {
	f := &taskcontrol.Fake{}
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			rc := fmt.Sprintf("rc%d", w%2)
			for slot := 1; slot <= 50; slot++ {
				task, err := f.CreateTask(ctx, spec(rc, slot))
				if errors.Is(err, api.ErrTaskNameConflict) {
					continue
				}
				if err != nil {
					t.Errorf("create: %v", err)
					return
				}
				if _, err := f.ListTasks(ctx, map[string]string{api.LabelController: rc}); err != nil {
					t.Errorf("list: %v", err)
				}
				if slot%2 == 0 {
					if err := f.DeleteTask(ctx, task.ID); err != nil {
						t.Errorf("delete: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	for _, rc := range []string{"rc0", "rc1"} {
		list, err := f.ListTasks(ctx, map[string]string{api.LabelController: rc})
		if err != nil || len(list) != 25 {
			t.Errorf("%s: got %d tasks (%v), want the 25 odd slots", rc, len(list), err)
		}
	}
}

// BenchmarkFakeListTasks lists one controller's 10 tasks among 100,000.
func BenchmarkFakeListTasks(b *testing.B) {
	f := &taskcontrol.Fake{}
	ctx := b.Context()
	for rc := range 10_000 {
		for slot := 1; slot <= 10; slot++ {
			if _, err := f.CreateTask(ctx, spec(fmt.Sprintf("rc%d", rc), slot)); err != nil {
				b.Fatal(err)
			}
		}
	}
	f.Reset()
	selector := map[string]string{api.LabelController: "rc42"}
	b.ResetTimer()
	for b.Loop() {
		list, err := f.ListTasks(ctx, selector)
		if err != nil || len(list) != 10 {
			b.Fatalf("got %d tasks, %v", len(list), err)
		}
	}
}

func TestFakeDeleteStopsAsTheSpecSays(t *testing.T) {
	grace := 7
	slept := []time.Duration{}
	f := &taskcontrol.Fake{MaxStopGrace: 0, Sleep: func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}}
	ctx := t.Context()
	web, err := f.CreateTask(ctx, api.TaskSpec{Name: "web-1", Container: api.Container{
		Image: "demo-task", StopSignal: "SIGINT", StopGracePeriodSeconds: &grace, PreStop: &api.PreStop{SleepSeconds: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := f.CreateTask(ctx, api.TaskSpec{Name: "plain-1", Container: api.Container{Image: "demo-task"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{web.ID, plain.ID} {
		if err := f.DeleteTask(ctx, id); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	got := f.Stops()
	if len(got) != 2 {
		t.Fatalf("stops: %+v, want 2", got)
	}
	if s := got[0]; s.Name != "web-1" || s.Signal != "SIGINT" || s.Grace != 7*time.Second || s.PreStop != "sleep 2s" {
		t.Errorf("web-1 stopped as %+v, want SIGINT, 7s and a sleep of 2s", s)
	}
	if got := web.Labels[api.LabelPreStop]; got != `{"sleepSeconds":2}` {
		t.Errorf("label %s = %q, want the preStop as Docker's create records it", api.LabelPreStop, got)
	}
	if !reflect.DeepEqual(slept, []time.Duration{2 * time.Second}) {
		t.Errorf("slept %v, want the preStop's 2s", slept)
	}
	if s := got[1]; s.Signal != "" || s.Grace != taskcontrol.DefaultStopTimeout || s.PreStop != "" {
		t.Errorf("plain-1 stopped as %+v, want the defaults", s)
	}
}

func TestFakeDeleteCapsTheGraceAndReportsAFailedPreStop(t *testing.T) {
	grace := 60
	f := &taskcontrol.Fake{MaxStopGrace: 6 * time.Second, PreStopExec: func(context.Context, string, []string) error {
		return errors.New("exit 1")
	}}
	ctx := t.Context()
	web, err := f.CreateTask(ctx, api.TaskSpec{Name: "web-1", Container: api.Container{
		Image: "demo-task", StopGracePeriodSeconds: &grace, PreStop: &api.PreStop{Exec: []string{"/drain"}}}})
	if err != nil {
		t.Fatal(err)
	}
	err = f.DeleteTask(ctx, web.ID)
	if !errors.Is(err, api.ErrPreStopFailed) {
		t.Errorf("delete: %v, want an error wrapping ErrPreStopFailed", err)
	}
	if f.Len() != 0 {
		t.Error("the container stayed: a failed preStop must not hold its removal back")
	}
	if s := f.Stops(); len(s) != 1 || s[0].Grace != 6*time.Second {
		t.Errorf("stops %+v, want one with the grace capped at 6s", s)
	}
}
