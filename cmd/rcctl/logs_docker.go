package main

// The Docker side of logs: the containers of a controller on the local
// engine and their output, through the Docker Engine API client as the
// docker CLI reads it (docker logs), stdout and stderr kept apart.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/replication-manager/replication-manager/api"
)

// logOptions are the flags of logs that Docker applies.
type logOptions struct {
	follow bool
	// tail is the number of lines from the end to print; negative: all.
	tail int
}

// logSource is what logs needs from Docker. It is an interface so that
// tests can give a fake.
type logSource interface {
	// ListTasks lists the containers carrying every label of selector.
	ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error)
	// Logs copies the output of container id, stdout to stdout and stderr
	// to stderr, until it is all copied or, with follow, until the
	// container stops or ctx ends.
	Logs(ctx context.Context, id string, opts logOptions, stdout, stderr io.Writer) error
}

// dockerLogs is the logSource of a Docker Engine.
type dockerLogs struct{ cli *client.Client }

// dialLogs opens the Docker client as the docker CLI does; host "" reads
// DOCKER_HOST, else the local socket.
func dialLogs(host string) (logSource, func(), error) {
	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("docker client: %w", err)
	}
	return dockerLogs{cli}, func() { _ = cli.Close() }, nil
}

func (d dockerLogs) ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error) {
	args := filters.NewArgs()
	for k, v := range selector {
		args.Add("label", k+"="+v)
	}
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	tasks := make([]api.Task, 0, len(list))
	for _, c := range list {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		tasks = append(tasks, api.Task{ID: c.ID, Name: name, Labels: c.Labels, Image: c.Image, State: c.State})
	}
	return tasks, nil
}

func (d dockerLogs) Logs(ctx context.Context, id string, opts logOptions, stdout, stderr io.Writer) error {
	info, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", id, err)
	}
	tail := "all"
	if opts.tail >= 0 {
		tail = strconv.Itoa(opts.tail)
	}
	rc, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: opts.follow, Tail: tail})
	if err != nil {
		return fmt.Errorf("logs of %s: %w", strings.TrimPrefix(info.Name, "/"), err)
	}
	defer func() { _ = rc.Close() }()
	if info.Config != nil && info.Config.Tty {
		_, err = io.Copy(stdout, rc) // one stream, as the terminal had it
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, rc)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of %s: %w", strings.TrimPrefix(info.Name, "/"), err)
	}
	return nil
}
