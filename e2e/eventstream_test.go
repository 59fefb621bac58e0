package e2e

// The node follows Docker through its event stream; the periodic pass
// works from its cache and lists the containers only every
// --relist-period (issue 30). These tests hold both periods at an hour, so
// that only the events, or the list that follows a broken stream, can be
// what brings a removed container back.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/tcpproxy"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// noPeriodicPass keeps the periodic pass and its relist out of a test's
// way.
var noPeriodicPass = []string{"--sync-period", "1h", "--relist-period", "1h"}

// replacedWithin waits until slot name of controller id runs a container
// other than victim, and returns how long that took from start.
func replacedWithin(t *testing.T, id, name, victim string, start time.Time) time.Duration {
	t.Helper()
	cli := dockertest.Client(t)
	testpoll.Eventually(t, 60*time.Second, func() error {
		c, ok := containers(t, cli, id)[name]
		if !ok || c.ID == victim || c.State != "running" {
			return fmt.Errorf("%s not replaced yet", name)
		}
		return nil
	})
	return time.Since(start)
}

// A container removed behind the manager's back is replaced from its
// destroy event (within a second on a quiet machine: make bench), not by
// a periodic pass, an hour away here.
func TestAContainerRemovedBehindTheManagersBackIsReplacedFromItsEvent(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, noPeriodicPass...)
	id := newID("event-replace")

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	victim := waitForReplicas(t, cli, id, 2)[id+"-1"]
	start := time.Now()
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// replacedWithin's minute is far from the hour of either period: only
	// the event can have done it (how fast is make bench's replacement row)
	took := replacedWithin(t, id, id+"-1", victim.ID, start)
	t.Logf("replaced %s-1 %s after its removal", id, took)
	waitForReplicas(t, cli, id, 2)
}

// The node's connection to Docker is cut (a proxy in front of the
// engine's socket) and a container removed while it is: the destroy event
// is lost. The stream reconnects, lists, finds the cache wrong, counts it
// in replication_manager_cache_drift_total, and replaces the container.
func TestADroppedEventStreamStillConverges(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	host := cli.DaemonHost()
	if !strings.HasPrefix(host, "unix://") && !strings.HasPrefix(host, "tcp://") {
		t.Skipf("Docker at %s: the proxy speaks TCP to a unix:// or tcp:// engine only", host)
	}
	proxy := tcpproxy.New(t, strings.TrimPrefix(host, "tcp://"))
	d := startDaemon(t, append([]string{"--docker-host", "tcp://" + proxy.Addr(), "--docker-allow-insecure-tcp"}, noPeriodicPass...)...)
	id := newID("cut-stream")

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	victim := waitForReplicas(t, cli, id, 2)[id+"-1"]
	restarts := d.counter(t, "replication_manager_docker_watch_restarts_total")

	proxy.Cut()
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()

	replacedWithin(t, id, id+"-1", victim.ID, time.Now())
	waitForReplicas(t, cli, id, 2)
	if got := d.counter(t, "replication_manager_docker_watch_restarts_total"); got <= restarts {
		t.Errorf("docker watch restarts %v, want more than %v: the cut should have broken the stream", got, restarts)
	}
	if got := d.counter(t, "replication_manager_cache_drift_total"); got < 1 {
		t.Errorf("cache drift %v, want at least 1: the list after the reconnect found %s-1 gone", got, id)
	}
	// the log names the first five that differed: on an engine other
	// tests share, those may be theirs (drift.go's own test checks that
	// it names ours)
	if !strings.Contains(d.logs.String(), "the container list found the cache wrong") {
		t.Error("no warning that the list found the cache wrong")
	}
}

// counter reads an unlabelled counter from the daemon's /metrics; 0 when
// it is not there.
func (d *daemon) counter(t *testing.T, name string) float64 {
	t.Helper()
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`)
	m := line.FindStringSubmatch(httpGet(t, "http://"+d.metricsAddr+"/metrics"))
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}
