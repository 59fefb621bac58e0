package bench

// This file is the engine driven directly, as a person would with the CLI:
// a task is `docker volume create` of each emptyDir, `docker run -d` of its
// first container, then `docker run -d --network container:<first>` of
// each other one (a plain container is a task of one container and no
// volume), and `docker rm -f` and `docker volume rm` to remove it. The
// shapes come from the manifest through api.TaskSpecs, as the manager's
// do, so both sides make the same containers. Also here: listing and
// removing what a run made, found by its labels.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// rawTask is one task as plain Docker calls: its volumes, created first,
// then its containers in order, the first holding the network.
type rawTask struct {
	volumes    []api.VolumeSpec
	containers []rawContainer
	// pull makes a create of an image the engine lacks pull it and create
	// again, as `docker run -d` does.
	pull bool
}

// rawContainer is one `docker run -d`.
type rawContainer struct {
	name   string
	config *container.Config
	host   *container.HostConfig
}

// plainTask is `docker run -d --name <id>-<slot>` of image with labels,
// running the demo task's command.
func plainTask(id string, slot int, image string, labels map[string]string, pull bool) rawTask {
	config := &container.Config{Image: image, Cmd: demospec.Command, Labels: labels}
	return rawTask{containers: []rawContainer{{name: fmt.Sprintf("%s-%d", id, slot), config: config, host: &container.HostConfig{}}}, pull: pull}
}

// newRawTask is the task in slot of m under the name prefix id, with
// labels on every container and volume. It maps what the bench's tasks
// use: image, command, network join and emptyDir mounts (not environment,
// health checks, host directories, ports, resources or the fields a
// security policy guards).
func newRawTask(id string, slot int, m *api.ContainerManifest, labels map[string]string) rawTask {
	t := rawTask{volumes: api.EmptyDirVolumes(id, slot, m, labels)}
	for _, spec := range api.TaskSpecs(id, slot, m, labels) {
		host := &container.HostConfig{}
		if spec.JoinNetwork != "" {
			host.NetworkMode = container.NetworkMode("container:" + spec.JoinNetwork)
		}
		for _, mt := range spec.Mounts {
			host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeVolume, Source: mt.Source, Target: mt.Target, ReadOnly: mt.ReadOnly,
				VolumeOptions: &mount.VolumeOptions{Labels: maps.Clone(mt.VolumeLabels)}})
		}
		config := &container.Config{Image: spec.Container.Image, Cmd: strslice.StrSlice(spec.Container.Command), Labels: spec.Labels}
		t.containers = append(t.containers, rawContainer{name: spec.Name, config: config, host: host})
	}
	return t
}

// run creates the task's volumes, then creates and starts its containers
// one after the other. It returns the containers' ids, those it made
// before a failure included.
func (t rawTask) run(ctx context.Context, cli *client.Client) ([]string, error) {
	for _, v := range t.volumes {
		if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: v.Name, Labels: maps.Clone(v.Labels)}); err != nil {
			return nil, fmt.Errorf("volume create %s: %w", v.Name, err)
		}
	}
	var ids []string
	for _, c := range t.containers {
		created, err := cli.ContainerCreate(ctx, c.config, c.host, nil, nil, c.name)
		if t.pull && cerrdefs.IsNotFound(err) {
			if err = pullImage(ctx, cli, c.config.Image); err == nil {
				created, err = cli.ContainerCreate(ctx, c.config, c.host, nil, nil, c.name)
			}
		}
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

// remove force-removes the task's containers ids, the joined ones first,
// then its volumes.
func (t rawTask) remove(ctx context.Context, cli *client.Client, ids []string) error {
	var errs []error
	for _, id := range slices.Backward(ids) {
		errs = append(errs, removeContainer(ctx, cli, id))
	}
	for _, v := range t.volumes {
		if err := cli.VolumeRemove(ctx, v.Name, false); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume rm %s: %w", v.Name, err))
		}
	}
	return errors.Join(errs...)
}

// inParallel runs do(i) for i < n at once and returns the first error and
// how many there were, so that n identical failures read as one line.
func inParallel(n int, do func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = do(i) })
	}
	wg.Wait()
	var first error
	failed := 0
	for _, err := range errs {
		if err != nil {
			first = cmp.Or(first, err)
			failed++
		}
	}
	if failed > 1 {
		return fmt.Errorf("%w (and %d more failures)", first, failed-1)
	}
	return first
}

// removeContainer force-removes one container; one already gone, or being
// removed, is not an error.
func removeContainer(ctx context.Context, cli *client.Client, id string) error {
	err := cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "already in progress") {
		return fmt.Errorf("remove container %.12s: %w", id, err)
	}
	return nil
}

func removeImage(ctx context.Context, cli *client.Client, tag string) error {
	_, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove image %s: %w", tag, err)
	}
	return nil
}

// labelFilter filters by every label of labels.
func labelFilter(labels map[string]string) filters.Args {
	args := filters.NewArgs()
	for k, v := range labels {
		args.Add("label", k+"="+v)
	}
	return args
}

// listContainers returns every container, in any state, with labels.
func listContainers(ctx context.Context, cli *client.Client, labels map[string]string) ([]container.Summary, error) {
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: labelFilter(labels)})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	return list, nil
}

// waitRunning waits, for at most a minute, until exactly n containers with
// labels run and, unless stopped (Swarm keeps the containers of its old
// tasks), no other is left. It returns the running ones sorted by name.
func waitRunning(ctx context.Context, cli *client.Client, labels map[string]string, n int, stopped bool) ([]container.Summary, error) {
	var running []container.Summary
	_, err := testpoll.Wait(ctx, time.Minute, func() error {
		list, err := listContainers(ctx, cli, labels)
		if err != nil {
			return err
		}
		running = slices.DeleteFunc(slices.Clone(list), func(c container.Summary) bool { return c.State != "running" })
		if len(running) != n || (!stopped && len(list) != n) {
			return fmt.Errorf("%d containers with %v, %d running, want %d running", len(list), labels, len(running), n)
		}
		return nil
	})
	slices.SortFunc(running, func(a, b container.Summary) int {
		return strings.Compare(strings.Join(a.Names, ","), strings.Join(b.Names, ","))
	})
	return running, err
}

// waitVolumesGone waits until no volume with labels is left, for at most
// a minute.
func waitVolumesGone(ctx context.Context, cli *client.Client, labels map[string]string) error {
	_, err := testpoll.Wait(ctx, time.Minute, func() error {
		resp, err := cli.VolumeList(ctx, volume.ListOptions{Filters: labelFilter(labels)})
		if err == nil && len(resp.Volumes) > 0 {
			err = fmt.Errorf("%d volumes with %v still there", len(resp.Volumes), labels)
		}
		return err
	})
	return err
}

// runVolume reports whether v is a volume of run runID: one the raw side
// made (the run's label), or an emptyDir of one of the run's controllers,
// which the manager labels with the controller only (every controller id
// of a run begins rmbench-<run>-).
func runVolume(labels map[string]string, runID string) bool {
	return labels[runLabel] == runID || strings.HasPrefix(labels[api.LabelController], "rmbench-"+runID+"-")
}

// runVolumes are the names of the volumes of run runID (runVolume).
func runVolumes(ctx context.Context, cli *client.Client, runID string) ([]string, error) {
	resp, err := cli.VolumeList(ctx, volume.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	var names []string
	for _, v := range resp.Volumes {
		if v != nil && runVolume(v.Labels, runID) {
			names = append(names, v.Name)
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
