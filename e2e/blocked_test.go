package e2e

// A controller that cannot progress without a change says so, and the
// commands that wait for it stop at once (docs/CONTRACT.md, Progressing);
// a part of a task that someone removes is no crash.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/internal/dockertest"
)

func TestRolloutBlockedByAnUnschedulableSlotFailsRolloutStatusWithinSeconds(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	newImage := tagImage(t, cli, image, "blocked")
	labels := dockertest.Labels(t)
	info, err := cli.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	id := newID("blocked")

	// two replicas reserve 80% of the machine's CPUs: a third fits nowhere
	rc := controller(id, image, 2, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].CPU = int64(info.NCPU) * 1024 * 4 / 10
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))

	rc.DesiredState.Replicas = 3
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = newImage
	applyRC(t, d, rc)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := d.rcctlCmd(ctx, "rollout", "status", id)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	t.Logf("rollout status exited after %s (%v)\nstdout:\n%s\nstderr:\n%s", took.Round(time.Millisecond), err, stdout.String(), stderr.String())

	if err == nil {
		t.Fatal("rollout status exited 0 on a rollout that a slot fitting no node blocks")
	}
	if took > 30*time.Second {
		t.Errorf("rollout status took %s to fail, want within 30 s", took.Round(time.Millisecond))
	}
	slot := fmt.Sprintf("slot %s-3 fits no node", id)
	for _, want := range []string{"rollout of " + id + " is blocked", slot, "cpu: needs", "a reservation: 1024 = one CPU"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("rollout status's stderr does not say %q", want)
		}
	}
	st := d.status(t, id)
	if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Status != "False" || c.Reason != api.ReasonBlocked || !strings.Contains(c.Message, slot) {
		t.Errorf("Progressing %+v, want False, Blocked, naming %s", c, slot)
	}
}

func TestRemovingASidecarIsNoCrash(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	id := newID("sidegone")
	t.Cleanup(func() { removeVolumes(t, cli, id) }) // after the containers' cleanup: a volume in use stays
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)

	d.rcctl(t, mustJSON(t, demospec.SidecarController(id, image, 1, labels)), "apply", "-f", "-")
	before := waitForTasks(t, cli, id, 1, false, 90*time.Second)
	// within crashMinRun (10 s) of its start: a crash if it were one
	victim := before[id+"-1.prober"]
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	after := waitForTasks(t, cli, id, 1, false, 30*time.Second)
	if after[id+"-1"].ID == before[id+"-1"].ID {
		t.Errorf("%s-1 was kept: a task whose sidecar went must be replaced whole", id)
	}
	t.Logf("slot 1 whole again %s after docker rm -f of its sidecar", time.Since(removed).Round(time.Millisecond))
	holdFor(t, 5*time.Second, func() error {
		if st := d.status(t, id); st != nil {
			if c := st.FindCondition(api.ConditionCrashLoop); c != nil {
				return fmt.Errorf("CrashLoop %+v after docker rm -f of a sidecar", c)
			}
		}
		return nil
	})
	if out := d.rcctl(t, "", "describe", id); strings.Contains(out, "Crashed") {
		t.Errorf("describe shows a crash after docker rm -f of a sidecar:\n%s", out)
	}
}

// TestRunOnAnotherPortBecomesReady: the demo image's HEALTHCHECK probes the
// port the task was told to listen on (README: rcctl run hello2 ... --
// /task --listen :8081), and run --wait waits until it is ready.
func TestRunOnAnotherPortBecomesReady(t *testing.T) {
	t.Parallel()
	dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("port8081")

	args := []string{"run", id, "--image", image, "--label", "name=" + id, "--wait", "--timeout", "60s"}
	for k, v := range labels {
		args = append(args, "--label", k+"="+v)
	}
	out := d.rcctl(t, "", append(args, "--", "/task", "--listen", ":8081")...)

	if !strings.Contains(out, id+": 1 of 1 ready") {
		t.Errorf("run --wait said:\n%s\nwant %s: 1 of 1 ready", out, id)
	}
}
