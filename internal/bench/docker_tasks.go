package bench

// This file is the Docker side of tasks of several containers driven
// directly, as a person would with the CLI: per task, `docker volume
// create` of each emptyDir, `docker run -d` of the first container, then
// `docker run -d --network container:<first>` of each other one, with the
// same mounts. The shapes come from the manifest through api.TaskSpecs, as
// the manager's do, so both sides make the same containers. Also here: the
// removal of the volumes a run made, found by its labels.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/api"
)

// rawTask is one task as plain Docker calls: its volumes, created first,
// then its containers in order, the first holding the network.
type rawTask struct {
	volumes    []api.VolumeSpec
	containers []rawContainer
}

// rawContainer is one `docker run -d`.
type rawContainer struct {
	name   string
	config *container.Config
	host   *container.HostConfig
}

// newRawTask is the task in slot of m under the name prefix id, with
// labels on every container and volume. It maps what the bench's tasks
// use: image, command, environment, health check, network join and volume
// mounts (not ports, resources or the fields a security policy guards).
func newRawTask(id string, slot int, m *api.ContainerManifest, labels map[string]string) rawTask {
	t := rawTask{volumes: api.EmptyDirVolumes(id, slot, m, labels)}
	for _, spec := range api.TaskSpecs(id, slot, m, labels) {
		c := spec.Container
		config := &container.Config{Image: c.Image, Labels: spec.Labels}
		if len(c.Command) > 0 {
			config.Cmd = strslice.StrSlice(append([]string(nil), c.Command...))
		}
		for _, e := range c.Env {
			config.Env = append(config.Env, e.Name+"="+e.Value)
		}
		if hc := c.HealthCheck; hc != nil {
			config.Healthcheck = &container.HealthConfig{Test: hc.ExplicitTest(), Interval: time.Duration(hc.Interval),
				Timeout: time.Duration(hc.Timeout), StartPeriod: time.Duration(hc.StartPeriod), Retries: hc.Retries}
		}
		host := &container.HostConfig{}
		if spec.JoinNetwork != "" {
			host.NetworkMode = container.NetworkMode("container:" + spec.JoinNetwork)
		}
		for _, mt := range spec.Mounts {
			dm := mount.Mount{Type: mount.TypeVolume, Source: mt.Source, Target: mt.Target, ReadOnly: mt.ReadOnly}
			if mt.Type == api.MountBind {
				dm.Type = mount.TypeBind
			} else if len(mt.VolumeLabels) > 0 {
				dm.VolumeOptions = &mount.VolumeOptions{Labels: maps.Clone(mt.VolumeLabels)}
			}
			host.Mounts = append(host.Mounts, dm)
		}
		t.containers = append(t.containers, rawContainer{name: spec.Name, config: config, host: host})
	}
	return t
}

// run creates the task's volumes, then creates and starts its containers
// one after the other, each joined one after its first runs. It returns
// the containers' ids, those it made before a failure included.
func (t rawTask) run(ctx context.Context, cli *client.Client) ([]string, error) {
	for _, v := range t.volumes {
		if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: v.Name, Labels: maps.Clone(v.Labels)}); err != nil {
			return nil, fmt.Errorf("volume create %s: %w", v.Name, err)
		}
	}
	var ids []string
	for _, c := range t.containers {
		created, err := cli.ContainerCreate(ctx, c.config, c.host, nil, nil, c.name)
		if err != nil {
			return ids, fmt.Errorf("create %s: %w", c.name, err)
		}
		ids = append(ids, created.ID)
		if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
			return ids, fmt.Errorf("start %s: %w", c.name, err)
		}
	}
	return ids, nil
}

// remove force-removes the task's containers, the joined ones first, then
// its volumes, as `docker rm -f` and `docker volume rm` would.
func (t rawTask) remove(ctx context.Context, cli *client.Client, ids []string) error {
	var errs []error
	for i := len(ids) - 1; i >= 0; i-- {
		errs = append(errs, removeContainer(ctx, cli, ids[i]))
	}
	for _, v := range t.volumes {
		if err := cli.VolumeRemove(ctx, v.Name, false); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume rm %s: %w", v.Name, err))
		}
	}
	return errors.Join(errs...)
}

// runRawTasks runs every task at once, one goroutine each, and returns the
// ids of each task's containers.
func runRawTasks(ctx context.Context, cli *client.Client, tasks []rawTask) ([][]string, error) {
	ids := make([][]string, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Go(func() { ids[i], errs[i] = t.run(ctx, cli) })
	}
	wg.Wait()
	return ids, joinErrs(errs)
}

// removeRawTasks removes every task at once, one goroutine each.
func removeRawTasks(ctx context.Context, cli *client.Client, tasks []rawTask, ids [][]string) error {
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		var own []string
		if i < len(ids) {
			own = ids[i]
		}
		wg.Go(func() { errs[i] = t.remove(ctx, cli, own) })
	}
	wg.Wait()
	return joinErrs(errs)
}

// listVolumes returns the volumes that carry every label of labels, or,
// for a key whose value is api.AnyLabelValue, the key.
func listVolumes(ctx context.Context, cli *client.Client, labels map[string]string) ([]*volume.Volume, error) {
	args := filters.NewArgs()
	for k, v := range labels {
		if v == api.AnyLabelValue {
			args.Add("label", k)
			continue
		}
		args.Add("label", k+"="+v)
	}
	resp, err := cli.VolumeList(ctx, volume.ListOptions{Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	return resp.Volumes, nil
}

// waitVolumesGone waits until no volume with labels is left, for at most
// a minute.
func waitVolumesGone(ctx context.Context, cli *client.Client, labels map[string]string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := listVolumes(ctx, cli, labels)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d volumes with %v still there after a minute", len(list), labels)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// runVolume reports whether v is a volume of run runID: one the raw side
// made (the run's label), or an emptyDir of one of the run's controllers,
// which the manager labels with the controller only (every controller id
// of a run begins rmbench-<run>-).
func runVolume(labels map[string]string, runID string) bool {
	return labels[runLabel] == runID || strings.HasPrefix(labels[api.LabelController], "rmbench-"+runID+"-")
}

// runVolumes returns the names of the volumes of run runID (runVolume).
func runVolumes(ctx context.Context, cli *client.Client, runID string) ([]string, error) {
	seen := make(map[string]bool)
	var names []string
	for _, selector := range []map[string]string{{runLabel: runID}, {api.LabelController: api.AnyLabelValue}} {
		list, err := listVolumes(ctx, cli, selector)
		if err != nil {
			return nil, err
		}
		for _, v := range list {
			if v != nil && !seen[v.Name] && runVolume(v.Labels, runID) {
				seen[v.Name] = true
				names = append(names, v.Name)
			}
		}
	}
	return names, nil
}

// removeRunVolumes removes every volume of the run, once its containers
// are gone, and fails if one is left.
func removeRunVolumes(ctx context.Context, cli *client.Client, runID string) error {
	names, err := runVolumes(ctx, cli, runID)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		if err := cli.VolumeRemove(ctx, name, true); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume rm %s: %w", name, err))
		}
	}
	if left, err := runVolumes(ctx, cli, runID); err != nil {
		errs = append(errs, err)
	} else if len(left) > 0 {
		errs = append(errs, fmt.Errorf("cleanup: %d volumes of run %s left behind: %s", len(left), runID, strings.Join(left, ", ")))
	}
	return errors.Join(errs...)
}
