package bench

// This file is the Docker side of a run that is not a measurement: the
// client, the benchmark image (built FROM scratch, since nothing can be
// pulled), plain create+start and removal, and the cleanup of every
// container the run's label finds.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// newDockerClient connects as the docker CLI does (DOCKER_HOST and friends,
// else the local socket), negotiating the API version.
func newDockerClient(ctx context.Context) (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	if _, err := cli.Ping(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: no engine answers: %w", err)
	}
	return cli, nil
}

// buildImage builds the demo task as tag with the HEALTHCHECK arguments
// healthcheck. Without any (""), the image has no HEALTHCHECK, so that a
// container is ready as soon as it runs and no health probes load the
// engine while it is measured: the image of every part but health.
func buildImage(ctx context.Context, tag, healthcheck string) error {
	cmd := exec.CommandContext(ctx, "bash", buildImageArgs(tag, healthcheck)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build image %s: %w\n%s", tag, err, out)
	}
	return nil
}

// buildImageArgs are the arguments of bash that build the demo task as
// tag with scripts/build-image.sh, with the HEALTHCHECK arguments
// healthcheck, or none when it is empty.
func buildImageArgs(tag, healthcheck string) []string {
	args := []string{"scripts/build-image.sh", "--cmd", "demo-task", "--bin-name", "task"}
	if healthcheck == "" {
		args = append(args, "--no-healthcheck")
	} else {
		args = append(args, "--healthcheck", healthcheck)
	}
	return append(args, tag)
}

func removeImage(ctx context.Context, cli *client.Client, tag string) error {
	_, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove image %s: %w", tag, err)
	}
	return nil
}

// runContainer does what `docker run -d` does: create, then start. It
// returns the container's id.
func runContainer(ctx context.Context, cli *client.Client, img, name string, labels map[string]string) (string, error) {
	created, err := cli.ContainerCreate(ctx, &container.Config{Image: img, Cmd: taskCommand, Labels: labels}, &container.HostConfig{}, nil, nil, name)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return created.ID, fmt.Errorf("start %s: %w", name, err)
	}
	return created.ID, nil
}

// removeContainers force-removes the containers with ids in parallel, as
// `docker rm -f` of each at once would.
func removeContainers(ctx context.Context, cli *client.Client, ids []string) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = removeContainer(ctx, cli, id) })
	}
	wg.Wait()
	return errors.Join(errs...)
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

// listContainers returns every container, in any state, with all the
// labels given.
func listContainers(ctx context.Context, cli *client.Client, labels map[string]string) ([]container.Summary, error) {
	args := filters.NewArgs()
	for k, v := range labels {
		args.Add("label", k+"="+v)
	}
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	return list, nil
}

// removeRunContainers force-removes every container of the run.
func removeRunContainers(ctx context.Context, cli *client.Client, runID string) error {
	list, err := listContainers(ctx, cli, map[string]string{runLabel: runID})
	if err != nil {
		return err
	}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	return removeContainers(ctx, cli, ids)
}

// joinErrs returns the first error and how many there were, so that N
// identical failures read as one line.
func joinErrs(errs []error) error {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		return first
	default:
		return fmt.Errorf("%w (and %d more failures)", first, n-1)
	}
}
