package roles

// This file is a task control that keeps as little as it can, for the
// memory measurement: with taskcontrol.Fake, every container's full record
// (and a log of every call) lives in the manager's process, where Docker
// would keep it in dockerd. bareTasks stores a few strings per container
// and one label map per controller, and builds fresh tasks on every list,
// inspect or create (Docker's answers with an inspect), every string a
// copy of its own, as decoding a Docker response would. It sends no events: the
// manager writes its own creates and deletes through to its cache.

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// bareTasks is an in-memory task control of minimal footprint, safe for
// concurrent use.
type bareTasks struct {
	mu     sync.Mutex
	seq    uint64
	byID   map[uint64]*bareTask // by sequence number (bareID)
	byName map[string]*bareTask
	// labels holds one label map per controller: its containers' labels
	// but the slot, which every container has its own.
	labels map[string]map[string]string
}

type bareTask struct {
	// seq is its number, which its id spells (bareID): the engine's
	// bookkeeping is not the host's, and stays as small as it can
	seq     uint64
	name    string
	rc      string
	slot    string
	created time.Time
}

func newBareTasks() *bareTasks {
	return &bareTasks{byID: make(map[uint64]*bareTask), byName: make(map[string]*bareTask), labels: make(map[string]map[string]string)}
}

// Len returns the number of containers.
func (b *bareTasks) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byID)
}

// task builds the api.Task of t as decoding the engine's answer would,
// every string a fresh copy, checked at asked (it runs: Docker's and the
// Fake's answers say so, and a node reports a task monitored only on such
// a word); b.mu must be held.
func (b *bareTasks) task(t *bareTask, asked time.Time) api.Task {
	labels := make(map[string]string, len(b.labels[t.rc])+1)
	for k, v := range b.labels[t.rc] {
		labels[strings.Clone(k)] = strings.Clone(v)
	}
	labels[strings.Clone(api.LabelSlot)] = strings.Clone(t.slot)
	return api.Task{ID: bareID(t.seq), Name: strings.Clone(t.name), Labels: labels, State: strings.Clone(api.StateRunning),
		Created: t.created, StartedAt: t.created, CheckedAt: asked}
}

// bareID is the id of container number seq: 64 hex digits, as Docker's.
func bareID(seq uint64) string { return fmt.Sprintf("%064x", seq) }

// bareSeq is the number of the container of id; 0, which no container
// has, for an id not of bareTasks.
func bareSeq(id string) uint64 {
	seq, err := strconv.ParseUint(id, 16, 64)
	if err != nil || len(id) != 64 {
		return 0
	}
	return seq
}

// ListTasks returns the containers whose labels contain the selector;
// every container for an empty one, as Docker does.
func (b *bareTasks) ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	asked := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]api.Task, 0, len(b.byID))
	for _, t := range b.byID {
		task := b.task(t, asked)
		if selectorMatches(task.Labels, selector) { // an empty selector lists all
			out = append(out, task)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// InspectTask returns one container.
func (b *bareTasks) InspectTask(ctx context.Context, id string) (api.Task, error) {
	asked := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.byID[bareSeq(id)]
	if !ok {
		return api.Task{}, fmt.Errorf("inspect %s: %w", id, api.ErrTaskNotFound)
	}
	return b.task(t, asked), nil
}

// CheckImage finds every image.
func (b *bareTasks) CheckImage(context.Context, string) error { return nil }

// RepoDigests knows no registry: no image has a repo digest.
func (b *bareTasks) RepoDigests(context.Context, string) ([]string, error) { return nil, nil }

// PullImage has nothing to pull: every image is found.
func (b *bareTasks) PullImage(context.Context, string) error { return nil }

// CreateTask creates a running container; a taken name is a conflict.
func (b *bareTasks) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	if err := ctx.Err(); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, taken := b.byName[spec.Name]; taken {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, api.ErrTaskNameConflict)
	}
	rc := spec.Labels[api.LabelController]
	if _, ok := b.labels[rc]; !ok {
		base := maps.Clone(spec.Labels)
		delete(base, api.LabelSlot)
		b.labels[rc] = base
	}
	b.seq++
	t := &bareTask{seq: b.seq, name: spec.Name, rc: rc, slot: spec.Labels[api.LabelSlot], created: time.Now()}
	b.byID[t.seq] = t
	b.byName[t.name] = t
	// as taskcontrol.Docker's create, which answers with an inspect
	return b.task(t, t.created), nil
}

// WaitTask is not for the benchmarks' tasks, which never end on their own
// (they have no init containers).
func (b *bareTasks) WaitTask(ctx context.Context, id string, tailLines int) (api.TaskExit, error) {
	return api.TaskExit{}, fmt.Errorf("wait for %s: bare tasks never end on their own", id)
}

// RenameTask renames a container.
func (b *bareTasks) RenameTask(ctx context.Context, id, newName string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.byID[bareSeq(id)]
	if !ok {
		return fmt.Errorf("rename %s: %w", id, api.ErrTaskNotFound)
	}
	if _, taken := b.byName[newName]; taken {
		return fmt.Errorf("rename %s to %s: %w", id, newName, api.ErrTaskNameConflict)
	}
	delete(b.byName, t.name)
	t.name = newName
	b.byName[newName] = t
	return nil
}

// DeleteTask removes a container; one that is gone is not an error.
func (b *bareTasks) DeleteTask(ctx context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.byID[bareSeq(id)]; ok {
		delete(b.byID, t.seq)
		delete(b.byName, t.name)
	}
	return nil
}

// CreateVolume, ListVolumes and RemoveVolume keep no volumes: the
// benchmarks' tasks declare none.
func (b *bareTasks) CreateVolume(_ context.Context, spec api.VolumeSpec) (api.NamedVolume, error) {
	return api.NamedVolume{Name: spec.Name, Labels: spec.Labels}, nil
}

func (b *bareTasks) ListVolumes(context.Context, map[string]string) ([]api.NamedVolume, error) {
	return nil, nil
}

func (b *bareTasks) RemoveVolume(context.Context, string, map[string]string) error { return nil }

// Events sends nothing until ctx ends.
func (b *bareTasks) Events(ctx context.Context, _ string) (<-chan api.TaskEvent, <-chan error) {
	out := make(chan api.TaskEvent)
	errc := make(chan error, 1)
	go func() {
		<-ctx.Done()
		close(out)
		errc <- fmt.Errorf("bare events: %w", ctx.Err())
		close(errc)
	}()
	return out, errc
}

// selectorMatches is the task control's selector rule: every pair present,
// api.AnyLabelValue matching any value of its key.
func selectorMatches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || (got != v && v != api.AnyLabelValue) {
			return false
		}
	}
	return true
}
