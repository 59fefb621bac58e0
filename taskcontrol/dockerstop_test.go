package taskcontrol_test

import (
	"errors"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestDockerDeleteTaskRunsThePreStopExecInTheContainer(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	image := dockertest.DemoImage(t)
	grace := 8
	tests := []struct {
		name    string
		exec    []string
		wantErr bool
	}{
		{"one that succeeds", []string{"/task", "healthcheck"}, false},
		{"one that cannot run", []string{"/no-such-program"}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, image, i+1)
			spec.Container.StopSignal, spec.Container.StopGracePeriodSeconds = "SIGINT", &grace
			spec.Container.PreStop = &api.PreStop{Exec: tt.exec}
			task := createTask(t, d, spec)
			cli := dockertest.Client(t)
			info, err := cli.ContainerInspect(t.Context(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if info.Config.StopSignal != "SIGINT" || info.Config.StopTimeout == nil || *info.Config.StopTimeout != grace {
				t.Errorf("inspect: StopSignal %q, StopTimeout %v; want SIGINT and %d", info.Config.StopSignal, info.Config.StopTimeout, grace)
			}
			// an exec needs a running container
			testpoll.Until(t, 10*time.Second, "the task to run", func() bool {
				got, err := d.InspectTask(t.Context(), task.ID)
				return err == nil && got.State == api.StateRunning
			})

			start := time.Now()
			err = d.DeleteTask(t.Context(), task.ID)
			if got := errors.Is(err, api.ErrPreStopFailed); got != tt.wantErr {
				t.Errorf("DeleteTask: %v; a failed preStop %v, want %v", err, got, tt.wantErr)
			}
			// the preStop runs within the grace, not before it: a delete
			// that waited it twice over would take 2×grace (a loaded
			// engine takes seconds to stop and remove)
			if took := time.Since(start); took >= 2*time.Duration(grace)*time.Second {
				t.Errorf("the delete took %s, twice the grace of %ds or more", took, grace)
			}
			if _, err := d.InspectTask(t.Context(), task.ID); !errors.Is(err, api.ErrTaskNotFound) {
				t.Errorf("after the delete: %v, want the container gone whatever its preStop did", err)
			}
		})
	}
}
