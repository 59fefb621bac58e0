package e2e

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
)

// received is the line the demo task logs at its stop signal.
var received = regexp.MustCompile(`received (SIG[A-Z]+) at (\S+)`)

func TestScaleDownStopsWithTheContainersSignalAfterItsPreStop(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("stop")

	rc := withImageHealthCheck(controller(id, image, 1, labels))
	grace := 7
	c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	c.StopSignal, c.StopGracePeriodSeconds, c.PreStop = "SIGINT", &grace, &api.PreStop{SleepSeconds: 2}
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	victim := waitForHealthy(t, cli, id, 1)[id+"-1"]

	info, err := cli.ContainerInspect(t.Context(), victim.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.StopSignal != "SIGINT" || info.Config.StopTimeout == nil || *info.Config.StopTimeout != 7 {
		t.Errorf("docker inspect: StopSignal %q, StopTimeout %v; want SIGINT and 7", info.Config.StopSignal, info.Config.StopTimeout)
	}

	// The container's output, followed until it stops.
	logs, err := cli.ContainerLogs(t.Context(), victim.ID, container.LogsOptions{ShowStdout: true, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logs.Close() }()
	var out bytes.Buffer
	followed := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(&out, &out, logs)
		followed <- err
	}()

	scaledDown := time.Now()
	d.rcctl(t, "", "scale", id, "--replicas", "0")
	select {
	case err := <-followed:
		if err != nil {
			t.Logf("following the container's output ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the container did not stop within 30s of the scale-down; its output:\n%s", out.String())
	}
	m := received.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the container logged no stop signal; its output:\n%s", out.String())
	}
	at, err := time.Parse(time.RFC3339Nano, m[2])
	if err != nil {
		t.Fatal(err)
	}
	after := at.Sub(scaledDown)
	t.Logf("the container received %s %s after the scale-down", m[1], after.Round(time.Millisecond))
	if m[1] != "SIGINT" {
		t.Errorf("the container received %s, want SIGINT", m[1])
	}
	if after < 2*time.Second {
		t.Errorf("the container received its signal %s after the scale-down, before its preStop of 2s ended", after)
	}
	if after > 7*time.Second {
		t.Errorf("the container received its signal %s after the scale-down, past its grace period of 7s", after)
	}
	waitForReplicas(t, cli, id, 0)
}
