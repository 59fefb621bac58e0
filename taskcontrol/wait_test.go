package taskcontrol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
)

func TestDockerWaitTaskGivesTheExitCodeAndTheLastLines(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	spec := testSpec(t, dockertest.DemoImage(t), 1)
	// the demo task says it listens, then that it exits, with code 3 (a
	// second on: on two busy cores it once said it exits before it listened)
	spec.Container.Command = api.Command{"/task", "--listen", ":8080", "--exit-after", "1s"}
	task := createTask(t, d, spec)

	exit, err := d.WaitTask(t.Context(), task.ID, 1)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	if exit.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", exit.ExitCode)
	}
	if got := strings.TrimSpace(exit.Output); got != "task: exiting after 1s as asked" {
		t.Errorf("last line %q, want the task's last line, from stderr", got)
	}
	if exit, err := d.WaitTask(t.Context(), task.ID, 10); err != nil || !strings.HasPrefix(exit.Output, "listening on") {
		t.Errorf("WaitTask of an exited container, 10 lines: %+v, %v; want its whole output at once", exit, err)
	}

	spec = testSpec(t, dockertest.DemoImage(t), 2)
	spec.Container.Command = api.Command{"/task", "write", "/ready"}
	task = createTask(t, d, spec)
	if exit, err := d.WaitTask(t.Context(), task.ID, 10); err != nil || exit.ExitCode != 0 || !strings.Contains(exit.Output, "wrote") {
		t.Errorf("WaitTask of a task that succeeds: %+v, %v; want code 0 and what it said", exit, err)
	}
	if _, err := d.WaitTask(t.Context(), "no-such-container-"+dockertest.RunID(), 10); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("WaitTask of a missing container: %v, want ErrTaskNotFound", err)
	}
}
