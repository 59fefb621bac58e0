package taskcontrol

// This file is an in-memory task control for unit tests and scale
// benchmarks. It keeps containers in maps, records every call and can be
// told to fail; it does not run anything, and its containers change state
// only when a test says so (SetState, SetHealth).

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// Fake is an in-memory task control, safe for concurrent use. The zero
// value is ready to use.
//
// Set the exported fields before the fake is shared with other goroutines;
// to change behaviour during a test, let the injected functions read state
// the test owns (an atomic, a channel). The injected functions are called
// without the fake's lock held, so they may call the fake.
//
// Every call is recorded, whether it succeeds or not, in order: "list",
// "create <name>", "delete <id>", "rename <id> <newName>", "inspect <id>",
// "image <ref>", "repo-digests <image id>", "volume-create <name>",
// "volume-list", "volume-remove <name>".
//
// Network joins and volumes are modelled as Docker has them: a container
// that joins another's network (TaskSpec.JoinNetwork) is created only when
// that one exists and runs, a mounted named volume that is missing is
// created with the mount's labels, and a volume that a container mounts
// cannot be removed (fakevolumes.go).
//
// Events streams what happens to the fake's containers (create, start, die,
// destroy, rename, health_status, pause, unpause), whether caused by the
// methods or by the test helpers (Add, SetState, SetHealth), each with what
// Docker's event carries (name, image, time, a die's exit code, a
// health_status's health, a rename's old name); FailEvents ends the
// streams.
type Fake struct {
	// Now is the clock for Created, StartedAt and FinishedAt; nil means
	// time.Now.
	Now func() time.Time
	// ListErr, when it returns an error, fails ListTasks.
	ListErr func() error
	// CreateErr, when it returns an error, fails CreateTask before anything
	// is created; return ErrImageNotFound (wrapped with the image) to
	// simulate a missing image.
	CreateErr func(spec api.TaskSpec) error
	// ImageErr, when it returns an error, fails CheckImage; return
	// ErrImageNotFound (wrapped with the image) for a missing image. Without
	// it every image is present.
	ImageErr func(image string) error
	// PullErr, when set, is what PullImage returns (after any wait of its
	// own, to simulate a slow pull); without it every pull succeeds at
	// once.
	PullErr func(ctx context.Context, image string) error
	// DeleteErr, when it returns an error, fails DeleteTask and the
	// container stays.
	DeleteErr func(id string) error
	// RenameErr, when it returns an error, fails RenameTask.
	RenameErr func(id, newName string) error
	// InspectErr, when it returns an error, fails InspectTask.
	InspectErr func(id string) error
	// EngineName is the name Engine reports; empty means "fake".
	EngineName string
	// CreateVolumeErr, when it returns an error, fails CreateVolume before
	// anything is created.
	CreateVolumeErr func(spec api.VolumeSpec) error
	// ListVolumesErr, when it returns an error, fails ListVolumes.
	ListVolumesErr func() error
	// RemoveVolumeErr, when it returns an error, fails RemoveVolume and
	// the volume stays.
	RemoveVolumeErr func(name string) error
	// StopTimeout and MaxStopGrace are DockerOptions' (the grace of a
	// container whose spec sets none, and the cap on every grace).
	StopTimeout, MaxStopGrace time.Duration
	// Sleep waits out a preStop's sleepSeconds; nil really sleeps.
	Sleep func(ctx context.Context, d time.Duration) error
	// PreStopExec runs a preStop's exec in container id; nil succeeds at
	// once.
	PreStopExec func(ctx context.Context, id string, cmd []string) error

	// Exit, when it returns true for a container WaitTask waits for, ends
	// that container at once with the exit it returns (an init container
	// that ran); otherwise WaitTask waits until SetState ends it.
	Exit func(t api.Task) (api.TaskExit, bool)

	// mu guards the containers, volumes and streams; callMu the record
	// of calls, so that counting a call never waits for a long list.
	mu     sync.RWMutex
	callMu sync.Mutex
	seq    uint64
	byID   map[string]*fakeTask
	byName map[string]*fakeTask
	// byController indexes the containers by the value of their
	// api.LabelController label, so that a controller's list does not scan
	// every container.
	byController map[string]map[*fakeTask]struct{}
	subs         map[*fakeSubscriber]struct{}
	volumes      map[string]*fakeVolume
	images       fakeImages

	calls  []string
	counts FakeCounts
	stops  []FakeStop
}

// FakeStop is one graceful stop a Fake's DeleteTask ran (stop.go).
type FakeStop struct {
	ID, Name string
	// Signal is the stop signal; "" is the container's default.
	Signal string
	// Grace is the container's grace period, capped; Remaining what was
	// left of it for the signal after the preStop.
	Grace, Remaining time.Duration
	// PreStop is what ran first (api.PreStop.String), "" for nothing.
	PreStop string
}

// FakeCounts counts the calls a Fake received, failed ones included.
type FakeCounts struct {
	List, Create, Delete, Rename, Inspect, Image, Pull, Wait int
	// RepoDigests counts the image inspects for repo digests.
	RepoDigests int
	// Volume calls: CreateVolume, ListVolumes, RemoveVolume.
	VolumeCreate, VolumeList, VolumeRemove int
}

// fakeTask is one container. Its Labels map is the fake's own and is never
// changed once the container exists: tasks handed out get a copy.
type fakeTask struct {
	api.Task
	// volumes are the named volumes it mounts.
	volumes []string
	// stop is how DeleteTask stops it, as its create recorded it.
	stop stopPlan
	// output is what WaitTask says it wrote.
	output string
}

// fakeNewID makes container IDs: 64 hex digits, like Docker's, derived from
// a counter so that runs are reproducible.
func fakeNewID(n uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	sum := sha256.Sum256(b[:])
	return hex.EncodeToString(sum[:])
}

func (f *Fake) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// record logs a call and counts it in *count, a field of f.counts.
func (f *Fake) record(count *int, call string) {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	*count++
	f.calls = append(f.calls, call)
}

func (f *Fake) initLocked() {
	if f.byID == nil {
		f.byID = make(map[string]*fakeTask)
		f.byName = make(map[string]*fakeTask)
		f.byController = make(map[string]map[*fakeTask]struct{})
	}
}

// ListTasks returns the containers whose labels contain every pair of
// selector, sorted by name, the running ones checked now (CheckedAt). With
// api.LabelController in the selector only that controller's containers
// are looked at.
func (f *Fake) ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error) {
	f.record(&f.counts.List, "list")
	listErr := f.ListErr
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	if listErr != nil {
		if err := listErr(); err != nil {
			return nil, fmt.Errorf("list containers: %w", err)
		}
	}

	// Under the lock, only a copy of each task's fields: a container's
	// label map is never changed once made, so the copies of the maps are
	// made after the lock is released, and a long list does not hold up
	// the creates and deletes that Docker would run alongside it.
	f.mu.RLock()
	var tasks []api.Task
	add := func(t *fakeTask) {
		if matches(t.Labels, selector) {
			tasks = append(tasks, t.Task)
		}
	}
	if rc, ok := selector[api.LabelController]; ok && rc != api.AnyLabelValue {
		for t := range f.byController[rc] {
			add(t)
		}
	} else {
		for _, t := range f.byID {
			add(t)
		}
	}
	f.mu.RUnlock()
	asked := f.now()
	for i := range tasks {
		tasks[i].Labels = maps.Clone(tasks[i].Labels)
		tasks[i] = checked(tasks[i], asked)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Name < tasks[j].Name })
	return tasks, nil
}

// CreateTask creates a running container named spec.Name, or fails with an
// error wrapping api.ErrTaskNameConflict when the name is taken. A container
// whose spec has a health check (not ["NONE"]) starts with health
// "starting", until SetHealth; the fake knows no images, so any other has
// none.
//
// As Docker does: a spec with JoinNetwork fails with an error wrapping
// api.ErrTaskNotFound when no container has that name or id, and with one
// wrapping api.ErrJoinTargetNotRunning when it is not running; ports or
// hostNetwork beside JoinNetwork are refused. Each MountVolume of a missing
// volume creates it with the mount's VolumeLabels. A failed create leaves
// nothing behind.
func (f *Fake) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	f.record(&f.counts.Create, "create "+spec.Name)
	createErr := f.CreateErr
	if err := ctx.Err(); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
	}
	if createErr != nil {
		if err := createErr(spec); err != nil {
			return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
		}
	}

	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initLocked()
	if _, taken := f.byName[spec.Name]; taken {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, api.ErrTaskNameConflict)
	}
	if err := checkJoin(spec); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
	}
	var joined string
	if spec.JoinNetwork != "" {
		target, ok := f.byName[spec.JoinNetwork]
		if !ok {
			target, ok = f.byID[spec.JoinNetwork]
		}
		switch {
		case !ok:
			return api.Task{}, fmt.Errorf("start %s: join the network of %s: %w", spec.Name, spec.JoinNetwork, api.ErrTaskNotFound)
		case target.State != api.StateRunning:
			return api.Task{}, fmt.Errorf("start %s: join the network of %s: %w", spec.Name, spec.JoinNetwork, api.ErrJoinTargetNotRunning)
		}
		joined = target.ID
	}
	for i, m := range spec.Mounts {
		if m.Type != api.MountVolume && m.Type != api.MountBind {
			return api.Task{}, fmt.Errorf("create %s: mounts[%d]: unknown type %q", spec.Name, i, m.Type)
		}
	}
	volumes := f.mountVolumesLocked(spec.Mounts, now)
	labels := maps.Clone(spec.Labels)
	if spec.Container.PreStop != nil { // as Docker's create records it
		if labels == nil {
			labels = map[string]string{}
		}
		labels[api.LabelPreStop] = preStopLabel(spec.Container.PreStop)
	}
	f.seq++
	t := &fakeTask{Task: api.Task{
		ID:        fakeNewID(f.seq),
		Name:      spec.Name,
		Labels:    labels,
		Image:     spec.Container.Image,
		ImageID:   f.imageIDLocked(spec.Container.Image),
		State:     api.StateRunning,
		Health:    specHealth(spec.Container.HealthCheck),
		Created:   now,
		StartedAt: now,
		JoinedTo:  joined,
	}, volumes: volumes, stop: f.stopPlanOf(spec.Container)}
	f.insertLocked(t)
	f.publishLocked("create", t, now)
	f.publishLocked("start", t, now)
	return t.copy(), nil
}

// CheckImage reports the image present unless ImageErr says otherwise.
func (f *Fake) CheckImage(ctx context.Context, image string) error {
	f.record(&f.counts.Image, "image "+image)
	imageErr := f.ImageErr
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
	if imageErr != nil {
		return imageErr(image)
	}
	return nil
}

// PullImage records the pull and returns what PullErr says.
func (f *Fake) PullImage(ctx context.Context, image string) error {
	f.record(&f.counts.Pull, "pull "+image)
	pullErr := f.PullErr
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	if pullErr != nil {
		return pullErr(ctx, image)
	}
	return nil
}

// Pulls returns the images of the PullImage calls, in order.
func (f *Fake) Pulls() []string { return f.callArgs("pull ") }

// DeleteTask stops a running container gracefully, as Docker's does
// (recorded for Stops), and removes it; a container that is gone is not an
// error. A failing PreStopExec gives an error wrapping api.ErrPreStopFailed
// once the container is removed.
func (f *Fake) DeleteTask(ctx context.Context, id string) (err error) {
	f.record(&f.counts.Delete, "delete "+id)
	deleteErr := f.DeleteErr
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	if deleteErr != nil {
		if err := deleteErr(id); err != nil {
			return fmt.Errorf("delete %s: %w", id, err)
		}
	}

	preStopErr := f.stop(ctx, id)
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	if !ok {
		return nil
	}
	f.removeLocked(t)
	if preStopErr != nil {
		defer func() { err = fmt.Errorf("delete %s: %w", id, preStopErr) }()
	}
	if t.State == api.StateRunning || t.State == api.StatePaused || t.State == api.StateRestarting {
		f.publishLocked("kill", t, now)
		f.publishLocked("die", t, now)
		f.publishLocked("stop", t, now)
	}
	f.publishLocked("destroy", t, now)
	return nil
}

// RenameTask renames a container. A taken name gives an error wrapping
// api.ErrTaskNameConflict, a missing container one wrapping
// api.ErrTaskNotFound.
func (f *Fake) RenameTask(ctx context.Context, id, newName string) error {
	f.record(&f.counts.Rename, "rename "+id+" "+newName)
	renameErr := f.RenameErr
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rename %s to %s: %w", id, newName, err)
	}
	if renameErr != nil {
		if err := renameErr(id, newName); err != nil {
			return fmt.Errorf("rename %s to %s: %w", id, newName, err)
		}
	}

	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	if !ok {
		return fmt.Errorf("rename %s to %s: %w", id, newName, api.ErrTaskNotFound)
	}
	if other, taken := f.byName[newName]; taken && other != t {
		return fmt.Errorf("rename %s to %s: %w", id, newName, api.ErrTaskNameConflict)
	}
	oldName := t.Name
	delete(f.byName, t.Name)
	t.Name = newName
	f.byName[newName] = t
	ev := f.eventLocked("rename", t, now)
	ev.OldName = oldName
	f.publishEventLocked(ev, t)
	return nil
}

// InspectTask returns one container, by id or by name, checked now when
// it runs (CheckedAt), or an error wrapping api.ErrTaskNotFound.
func (f *Fake) InspectTask(ctx context.Context, id string) (api.Task, error) {
	f.record(&f.counts.Inspect, "inspect "+id)
	inspectErr := f.InspectErr
	if err := ctx.Err(); err != nil {
		return api.Task{}, fmt.Errorf("inspect %s: %w", id, err)
	}
	if inspectErr != nil {
		if err := inspectErr(id); err != nil {
			return api.Task{}, fmt.Errorf("inspect %s: %w", id, err)
		}
	}

	f.mu.RLock()
	defer f.mu.RUnlock()
	t, ok := f.byID[id]
	if !ok {
		t, ok = f.byName[id] // Docker inspects by name too
	}
	if !ok {
		return api.Task{}, fmt.Errorf("inspect %s: %w", id, api.ErrTaskNotFound)
	}
	return checked(t.copy(), f.now()), nil
}

// Events streams the events of containers that carry the label key
// labelKey (all containers when it is empty), as Docker.Events does. No
// event is dropped: each stream queues what its reader has not taken yet.
// The stream ends when ctx is cancelled or FailEvents is called: the event
// channel closes and the error channel delivers one error and closes.
func (f *Fake) Events(ctx context.Context, labelKey string) (<-chan api.TaskEvent, <-chan error) {
	sub := &fakeSubscriber{labelKey: labelKey, wake: make(chan struct{}, 1)}
	f.mu.Lock()
	if f.subs == nil {
		f.subs = make(map[*fakeSubscriber]struct{})
	}
	f.subs[sub] = struct{}{}
	f.mu.Unlock()

	out := make(chan api.TaskEvent)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		defer func() {
			f.mu.Lock()
			delete(f.subs, sub)
			f.mu.Unlock()
		}()
		for {
			ev, ok, err := sub.next()
			if err != nil {
				errc <- fmt.Errorf("fake events: %w", err)
				return
			}
			if !ok {
				select {
				case <-sub.wake:
					continue
				case <-ctx.Done():
					errc <- fmt.Errorf("fake events: %w", ctx.Err())
					return
				}
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				errc <- fmt.Errorf("fake events: %w", ctx.Err())
				return
			}
		}
	}()
	return out, errc
}

// FailEvents ends every open event stream with err, after the events
// already queued, as a broken connection to Docker would.
func (f *Fake) FailEvents(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for sub := range f.subs {
		sub.fail(err)
	}
}

// fakeSubscriber is one open Events stream: an unbounded queue, so that a
// slow reader never blocks the fake.
type fakeSubscriber struct {
	labelKey string
	wake     chan struct{} // capacity 1: a pending wake-up

	mu    sync.Mutex
	queue []api.TaskEvent
	err   error
}

func (s *fakeSubscriber) push(ev api.TaskEvent) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.notify()
}

func (s *fakeSubscriber) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.notify()
}

func (s *fakeSubscriber) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next pops the oldest event; after the queue drains it returns the
// failure, if any.
func (s *fakeSubscriber) next() (api.TaskEvent, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		s.queue = nil // let a burst's backing array go
		return api.TaskEvent{}, false, s.err
	}
	ev := s.queue[0]
	s.queue[0] = api.TaskEvent{}
	s.queue = s.queue[1:]
	return ev, true, nil
}

// publishLocked queues the event action of t, at the time at, for every
// stream that wants it; f.mu must be held so that streams see events in
// the order of the changes.
func (f *Fake) publishLocked(action string, t *fakeTask, at time.Time) {
	f.publishEventLocked(f.eventLocked(action, t, at), t)
}

// eventLocked is the event action of t as Docker's would tell it: the
// container's name, image and labels, the time, a die's exit code and a
// health_status's health.
func (f *Fake) eventLocked(action string, t *fakeTask, at time.Time) api.TaskEvent {
	ev := api.TaskEvent{Action: action, ID: t.ID, Name: t.Name, Image: t.Image, Time: at}
	switch action {
	case "die":
		ev.ExitCode = t.ExitCode
	case "health_status":
		ev.Health = t.Health
	}
	return ev
}

// publishEventLocked queues ev, an event of t, for every stream that wants
// it, each with labels of its own; f.mu must be held.
func (f *Fake) publishEventLocked(ev api.TaskEvent, t *fakeTask) {
	for sub := range f.subs {
		if sub.labelKey != "" {
			if _, ok := t.Labels[sub.labelKey]; !ok {
				continue
			}
		}
		ev := ev
		ev.Labels = maps.Clone(t.Labels)
		sub.push(ev)
	}
}

// Ping always succeeds.
func (f *Fake) Ping(context.Context) error { return nil }

// Engine reports the fake engine: EngineName, an id made from it, 2 CPUs
// and 4 GiB.
func (f *Fake) Engine(context.Context) (api.Engine, error) {
	name := f.EngineName
	if name == "" {
		name = "fake"
	}
	return api.Engine{Name: name, ID: "fake-engine-" + name, CPUs: 2, Memory: 4 << 30}, nil
}

// Close does nothing.
func (f *Fake) Close() error { return nil }

// Add inserts a container as if it had been started by hand, keeping the
// fields given. An empty ID gets a fresh one, an empty State is running, a
// zero Created is now, and an empty ImageID the ID of the image Image names
// now (none without an Image). It returns the ID, or an error wrapping
// api.ErrTaskNameConflict. Add is not recorded as a call.
func (f *Fake) Add(task api.Task) (string, error) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initLocked()
	if _, taken := f.byName[task.Name]; taken {
		return "", fmt.Errorf("add %s: %w", task.Name, api.ErrTaskNameConflict)
	}
	if task.ID == "" {
		f.seq++
		task.ID = fakeNewID(f.seq)
	} else if _, taken := f.byID[task.ID]; taken {
		return "", fmt.Errorf("add %s: id %s already in use", task.Name, task.ID)
	}
	if task.State == "" {
		task.State = api.StateRunning
	}
	if task.Created.IsZero() {
		task.Created = now
	}
	if task.State == api.StateRunning && task.StartedAt.IsZero() {
		task.StartedAt = now
	}
	if task.ImageID == "" && task.Image != "" {
		task.ImageID = f.imageIDLocked(task.Image)
	}
	task.Labels = maps.Clone(task.Labels)
	t := &fakeTask{Task: task, stop: f.stopPlanOf(api.Container{})}
	f.insertLocked(t)
	f.publishLocked("create", t, now)
	if task.State == api.StateRunning {
		f.publishLocked("start", t, now)
	}
	return task.ID, nil
}

// SetState changes a container's state, as if it had exited (state
// "exited" and its exit code), been restarted ("running") or paused
// ("paused", and "running" again to unpause). It stamps FinishedAt or
// StartedAt with the clock, publishes the event Docker would (die, start,
// pause, unpause) and reports whether the container exists.
func (f *Fake) SetState(id, state string, exitCode int) bool {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	if !ok {
		return false
	}
	was := t.State
	t.State = state
	t.ExitCode = exitCode
	switch {
	case state == was:
	case was == api.StateRunning && state == api.StatePaused:
		f.publishLocked("pause", t, now)
	case was == api.StatePaused && state == api.StateRunning:
		f.publishLocked("unpause", t, now)
	case state == api.StateRunning:
		t.StartedAt = now
		t.Health = healthAfterStart(t.Health)
		f.publishLocked("start", t, now)
	case was == api.StateRunning || was == api.StatePaused:
		t.FinishedAt = now
		f.publishLocked("die", t, now)
	}
	return true
}

// healthAfterStart is the health of a container that (re)starts: one with a
// health check starts over.
func healthAfterStart(h string) string {
	if h == api.HealthNone {
		return h
	}
	return api.HealthStarting
}

// SetHealth changes a container's health and reports whether it exists.
func (f *Fake) SetHealth(id, health string) bool {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	if !ok {
		return false
	}
	t.Health = health
	f.publishLocked("health_status", t, now)
	return true
}

// Tasks returns every container, sorted by name.
func (f *Fake) Tasks() []api.Task {
	f.mu.RLock()
	defer f.mu.RUnlock()
	tasks := make([]api.Task, 0, len(f.byID))
	for _, t := range f.byID {
		tasks = append(tasks, t.copy())
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Name < tasks[j].Name })
	return tasks
}

// Len returns the number of containers.
func (f *Fake) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.byID)
}

// Calls returns the recorded calls in order.
func (f *Fake) Calls() []string {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	return append([]string(nil), f.calls...)
}

// Creates returns the names passed to CreateTask, in order.
func (f *Fake) Creates() []string { return f.callArgs("create ") }

// Deletes returns the IDs passed to DeleteTask, in order.
func (f *Fake) Deletes() []string { return f.callArgs("delete ") }

// Renames returns the renames asked for, in order, as "<id> <newName>".
func (f *Fake) Renames() []string { return f.callArgs("rename ") }

func (f *Fake) callArgs(prefix string) []string {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	var out []string
	for _, c := range f.calls {
		if arg, ok := strings.CutPrefix(c, prefix); ok {
			out = append(out, arg)
		}
	}
	return out
}

// Counts returns how many calls of each kind the fake received.
func (f *Fake) Counts() FakeCounts {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	return f.counts
}

// Reset forgets the recorded calls and counts; the containers stay.
func (f *Fake) Reset() {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	f.calls = nil
	f.counts = FakeCounts{}
	f.stops = nil
}

func (f *Fake) insertLocked(t *fakeTask) {
	f.byID[t.ID] = t
	f.byName[t.Name] = t
	if rc, ok := t.Labels[api.LabelController]; ok {
		set := f.byController[rc]
		if set == nil {
			set = make(map[*fakeTask]struct{})
			f.byController[rc] = set
		}
		set[t] = struct{}{}
	}
}

func (f *Fake) removeLocked(t *fakeTask) {
	delete(f.byID, t.ID)
	delete(f.byName, t.Name)
	if rc, ok := t.Labels[api.LabelController]; ok {
		delete(f.byController[rc], t)
		if len(f.byController[rc]) == 0 {
			delete(f.byController, rc)
		}
	}
}

// copy returns the task with its own labels map, so that callers can never
// change the fake's state by accident.
func (t *fakeTask) copy() api.Task {
	task := t.Task
	task.Labels = maps.Clone(t.Labels)
	return task
}

// matches reports whether labels contain every pair of selector.
func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || (got != v && v != api.AnyLabelValue) {
			return false
		}
	}
	return true
}

// stopPlanOf is the stop a container made from c gets.
func (f *Fake) stopPlanOf(c api.Container) stopPlan {
	p := stopPlan{Signal: c.StopSignal, Grace: f.StopTimeout, PreStop: c.PreStop}
	if p.Grace == 0 {
		p.Grace = DefaultStopTimeout
	}
	if g := c.StopGracePeriodSeconds; g != nil {
		p.Grace = time.Duration(*g) * time.Second
	}
	p.Grace = capGrace(p.Grace, f.MaxStopGrace)
	return p
}

// stop runs the graceful stop of container id when it runs, without the
// lock, and records it; it returns the preStop's failure.
func (f *Fake) stop(ctx context.Context, id string) error {
	f.mu.RLock()
	t, ok := f.byID[id]
	var plan stopPlan
	var name string
	running := ok && (t.State == api.StateRunning || t.State == api.StatePaused || t.State == api.StateRestarting)
	if ok {
		plan, name = t.stop, t.Name
	}
	f.mu.RUnlock()
	if !running {
		return nil
	}
	sleep := f.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	rec := FakeStop{ID: id, Name: name, Signal: plan.Signal, Grace: plan.Grace, PreStop: plan.PreStop.String()}
	preStopErr, _ := stopGracefully(ctx, plan, stopHooks{
		now:   f.now,
		sleep: sleep,
		exec: func(ctx context.Context, cmd []string) error {
			if f.PreStopExec == nil {
				return nil
			}
			return f.PreStopExec(ctx, id, cmd)
		},
		signal: func(_ context.Context, _ string, remaining time.Duration) error {
			rec.Remaining = remaining
			return nil
		},
	})
	f.callMu.Lock()
	f.stops = append(f.stops, rec)
	f.callMu.Unlock()
	return preStopErr
}

// Stops returns the graceful stops DeleteTask ran, in order.
func (f *Fake) Stops() []FakeStop {
	f.callMu.Lock()
	defer f.callMu.Unlock()
	return slices.Clone(f.stops)
}
