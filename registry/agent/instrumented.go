package agent

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/replication-manager/replication-manager/api"
)

// instrumentedTasks counts and times every call to the task control, by
// operation and result, so that /metrics shows what the manager costs
// Docker. It changes nothing else.
type instrumentedTasks struct {
	inner    TaskControlInterface
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func (m *metrics) instrument(tc TaskControlInterface) TaskControlInterface {
	return &instrumentedTasks{inner: tc, calls: m.dockerCalls, duration: m.dockerDuration}
}

// observe records one call; a name conflict and a missing container are
// answers, not failures of the call.
func (i *instrumentedTasks) observe(op string, start time.Time, err error) {
	result := "success"
	switch {
	case errors.Is(err, api.ErrTaskNameConflict):
		result = "conflict"
	case errors.Is(err, api.ErrTaskNotFound):
		result = "not_found"
	case err != nil:
		result = "error"
	}
	i.calls.WithLabelValues(op, result).Inc()
	i.duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

func (i *instrumentedTasks) ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error) {
	start := time.Now()
	tasks, err := i.inner.ListTasks(ctx, selector)
	i.observe("list", start, err)
	return tasks, err
}

func (i *instrumentedTasks) InspectTask(ctx context.Context, id string) (api.Task, error) {
	start := time.Now()
	t, err := i.inner.InspectTask(ctx, id)
	i.observe("inspect", start, err)
	return t, err
}

func (i *instrumentedTasks) CheckImage(ctx context.Context, image string) error {
	start := time.Now()
	err := i.inner.CheckImage(ctx, image)
	i.observe("image", start, err)
	return err
}

func (i *instrumentedTasks) RepoDigests(ctx context.Context, id string) ([]string, error) {
	start := time.Now()
	digests, err := i.inner.RepoDigests(ctx, id)
	i.observe("repo_digests", start, err)
	return digests, err
}

func (i *instrumentedTasks) PullImage(ctx context.Context, image string) error {
	start := time.Now()
	err := i.inner.PullImage(ctx, image)
	i.observe("pull", start, err)
	return err
}

func (i *instrumentedTasks) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	start := time.Now()
	t, err := i.inner.CreateTask(ctx, spec)
	i.observe("create", start, err)
	return t, err
}

func (i *instrumentedTasks) RenameTask(ctx context.Context, id, newName string) error {
	start := time.Now()
	err := i.inner.RenameTask(ctx, id, newName)
	i.observe("rename", start, err)
	return err
}

func (i *instrumentedTasks) DeleteTask(ctx context.Context, id string) error {
	start := time.Now()
	err := i.inner.DeleteTask(ctx, id)
	i.observe("delete", start, err)
	return err
}

func (i *instrumentedTasks) CreateVolume(ctx context.Context, spec api.VolumeSpec) (api.NamedVolume, error) {
	start := time.Now()
	v, err := i.inner.CreateVolume(ctx, spec)
	i.observe("create_volume", start, err)
	return v, err
}

func (i *instrumentedTasks) ListVolumes(ctx context.Context, selector map[string]string) ([]api.NamedVolume, error) {
	start := time.Now()
	vs, err := i.inner.ListVolumes(ctx, selector)
	i.observe("list_volumes", start, err)
	return vs, err
}

func (i *instrumentedTasks) RemoveVolume(ctx context.Context, name string, selector map[string]string) error {
	start := time.Now()
	err := i.inner.RemoveVolume(ctx, name, selector)
	i.observe("remove_volume", start, err)
	return err
}

func (i *instrumentedTasks) Events(ctx context.Context, labelKey string) (<-chan api.TaskEvent, <-chan error) {
	i.calls.WithLabelValues("events", "success").Inc()
	return i.inner.Events(ctx, labelKey)
}

func (i *instrumentedTasks) WaitTask(ctx context.Context, id string, tailLines int) (api.TaskExit, error) {
	start := time.Now()
	exit, err := i.inner.WaitTask(ctx, id, tailLines)
	i.observe("wait", start, err)
	return exit, err
}
