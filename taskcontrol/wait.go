package taskcontrol

// This file waits for a container to end, for what runs to its exit (an
// init container): its exit code and the last lines of its output.

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/replication-manager/replication-manager/api"
)

// WaitTask waits until container id is not running (or ctx ends) and
// returns its exit code and the last tailLines lines of its output. A
// missing container gives an error wrapping api.ErrTaskNotFound.
func (d *Docker) WaitTask(ctx context.Context, id string, tailLines int) (api.TaskExit, error) {
	waitCh, errCh := d.cli.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	var code int
	select {
	case resp := <-waitCh:
		if resp.Error != nil && resp.Error.Message != "" {
			return api.TaskExit{}, fmt.Errorf("wait for %s: %s", id, resp.Error.Message)
		}
		code = int(resp.StatusCode)
	case err := <-errCh:
		if cerrdefs.IsNotFound(err) {
			return api.TaskExit{}, fmt.Errorf("wait for %s: %w", id, api.ErrTaskNotFound)
		}
		return api.TaskExit{}, fmt.Errorf("wait for %s: %w", id, err)
	}
	logs, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(tailLines)})
	if err != nil {
		return api.TaskExit{ExitCode: code}, fmt.Errorf("read the output of %s: %w", id, err)
	}
	defer logs.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, logs); err != nil {
		return api.TaskExit{ExitCode: code}, fmt.Errorf("read the output of %s: %w", id, err)
	}
	return api.TaskExit{ExitCode: code, Output: out.String()}, nil
}
