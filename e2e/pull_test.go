package e2e

// Images from registries (docs/CONTRACT.md, Images), against the
// distribution registry built from its module and started on 127.0.0.1 by
// internal/registrytest: images built here are pushed to it and removed
// from the engine, so that the node has to pull them back.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/registrytest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// pushForTest pushes the demo image to reg as e2e/NAME:RUN, removed from
// the engine; once the test ends, its containers go first (after the
// daemon, which startDaemon stops before), then the pulled image.
func pushForTest(t *testing.T, reg *registrytest.Registry, name, dockerConfig string, labels map[string]string) string {
	t.Helper()
	cli := dockertest.Client(t)
	ref := reg.Push(t, dockertest.DemoImage(t), "e2e/"+name+":"+dockertest.RunID(), dockerConfig)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute) // t.Context() ends before the cleanups
		defer cancel()
		if err := dockertest.RemoveContainers(ctx, cli, dockertest.TestLabel, labels[dockertest.TestLabel]); err != nil {
			t.Errorf("remove the test's containers: %v", err)
		}
	})
	return ref
}

// dockerCalls sums replication_manager_docker_calls_total over the lines
// of /metrics whose labels match, such as operation="pull".
func (d *daemon) dockerCalls(t *testing.T, match ...string) int {
	t.Helper()
	line := regexp.MustCompile(`(?m)^replication_manager_docker_calls_total\{([^}]*)\} (\d+)`)
	sum := 0
	for _, m := range line.FindAllStringSubmatch(httpGet(t, "http://"+d.metricsAddr+"/metrics"), -1) {
		all := true
		for _, want := range match {
			all = all && strings.Contains(m[1], want)
		}
		if all {
			n, _ := strconv.Atoi(m[2])
			sum += n
		}
	}
	return sum
}

func TestIfNotPresentPullsAPushedImageOnceForTwoReplicas(t *testing.T) {
	t.Parallel() // a daemon, a registry, ids and labels of its own
	cli := dockertest.Client(t)
	labels := dockertest.Labels(t)
	reg := registrytest.Start(t, registrytest.Options{})
	ref := pushForTest(t, reg, "ifnotpresent", "", labels)
	d := startDaemon(t)
	id := newID("ifnotpresent")

	d.rcctl(t, controllerJSON(t, id, ref, 2, labels), "apply", "-f", "-")
	waitForReplicas(t, cli, id, 2)
	if n := d.dockerCalls(t, `operation="pull"`); n != 1 {
		t.Errorf("%d pulls for 2 replicas of a missing image, want 1", n)
	}
	if out := d.rcctl(t, "", "describe", id); !regexp.MustCompile(`Pulled .*pulled image ` + regexp.QuoteMeta(ref) + ` in `).MatchString(out) {
		t.Errorf("describe shows no Pulled event with its duration:\n%s", out)
	}
}

// A registry that wants a user: without credentials the node's pulls fail,
// named and bounded, while another controller on the node scales as if
// nothing were wrong; a daemon given the right --docker-config converges.
func TestPullWithoutCredentialsFailsBoundedAndConvergesWithThem(t *testing.T) {
	t.Parallel() // a daemon, a registry, ids and labels of its own
	cli := dockertest.Client(t)
	labels := dockertest.Labels(t)
	reg := registrytest.Start(t, registrytest.Options{User: "e2e", Password: "right-" + dockertest.RunID()})
	good := reg.DockerConfig(t, "e2e", "right-"+dockertest.RunID())
	ref := pushForTest(t, reg, "private", good, labels)
	none := reg.DockerConfig(t, "", "")
	d := startDaemon(t, "--docker-config", none)
	id, other := newID("private"), newID("beside")

	start := time.Now()
	d.rcctl(t, controllerJSON(t, id, ref, 3, labels), "apply", "-f", "-")
	d.rcctl(t, controllerJSON(t, other, dockertest.DemoImage(t), 0, labels), "apply", "-f", "-")
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionReplicaFailure)
		if c == nil || c.Reason != api.ReasonPullFailed || !strings.Contains(strings.ToLower(c.Message), "auth") {
			return fmt.Errorf("ReplicaFailure = %+v, want PullFailed naming authorization", c)
		}
		return nil
	})
	t.Logf("%s: %s", api.ReasonPullFailed, d.status(t, id).FindCondition(api.ConditionReplicaFailure).Message)
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("PullFailed after %s, want within 60s", took)
	}
	d.rcctl(t, "", "scale", other, "--replicas", "3")
	waitForReplicas(t, cli, other, 3)

	// the failing controller's calls: every pull, its image check (the
	// other's image is there) and any failed create
	cost := func() int {
		return d.dockerCalls(t, `operation="pull"`) + d.dockerCalls(t, `operation="image"`, `result="error"`) +
			d.dockerCalls(t, `operation="create"`, `result="error"`)
	}
	if rest := time.Until(start.Add(time.Minute)); rest > 0 {
		time.Sleep(rest)
	}
	if n := cost(); n > 10 {
		t.Errorf("%d pull, image and failed create calls in the first minute, want at most 10", n)
	} else {
		t.Logf("%d pull, image and failed create calls in the first minute", n)
	}
	if out := d.rcctl(t, "", "describe", id); !strings.Contains(out, "PullFailed") {
		t.Errorf("describe shows no PullFailed:\n%s", out)
	}

	d.stop(t)
	d.start(t, "--docker-config", good)
	waitForReplicas(t, cli, id, 3)
	testpoll.Eventually(t, 30*time.Second, func() error {
		if c := d.status(t, id).FindCondition(api.ConditionReplicaFailure); c != nil {
			return fmt.Errorf("ReplicaFailure still set: %+v", c)
		}
		return nil
	})
}

func TestNeverDoesNotPullAMissingImage(t *testing.T) {
	t.Parallel() // a daemon, a registry, ids and labels of its own
	labels := dockertest.Labels(t)
	reg := registrytest.Start(t, registrytest.Options{})
	ref := pushForTest(t, reg, "never", "", labels)
	d := startDaemon(t)
	id := newID("never")

	rc := controller(id, ref, 1, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = api.PullNever
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionReplicaFailure)
		if c == nil || c.Reason != api.ReasonCreateFailed || !strings.Contains(c.Message, "no such image") {
			return fmt.Errorf("ReplicaFailure = %+v, want CreateFailed: no such image", c)
		}
		return nil
	})
	if n := d.dockerCalls(t, `operation="pull"`); n != 0 {
		t.Errorf("%d pulls under imagePullPolicy Never, want 0", n)
	}
}

// imagePullPolicy Always: after the tag is pushed again from another
// image, a container the rollout restart replaces runs the new image.
func TestAlwaysPullsTheTagsCurrentImageForANewContainer(t *testing.T) {
	t.Parallel() // a daemon, a registry, ids and labels of its own
	cli := dockertest.Client(t)
	labels := dockertest.Labels(t)
	reg := registrytest.Start(t, registrytest.Options{})
	ref := pushForTest(t, reg, "always", "", labels)
	d := startDaemon(t)
	id := newID("always")

	rc := controller(id, ref, 1, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = api.PullAlways
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	first := waitForReplicas(t, cli, id, 1)

	// another image under the same tag in the registry, not on the engine
	build := exec.CommandContext(t.Context(), "docker", "build", "--quiet", "--tag", ref, "-")
	build.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	build.Stdin = strings.NewReader("FROM " + dockertest.DemoImage(t) + "\nLABEL rmtest.variant=" + dockertest.RunID() + "\n")
	var stderr strings.Builder
	build.Stderr = &stderr
	out, err := build.Output()
	if err != nil {
		t.Fatalf("docker build: %v: %s", err, stderr.String())
	}
	second := strings.TrimSpace(string(out))
	if push := exec.CommandContext(t.Context(), "docker", "push", "--quiet", ref); push.Run() != nil {
		t.Fatalf("docker push %s failed", ref)
	}
	registrytest.RemoveLocal(t, ref)
	for _, c := range first {
		if c.ImageID == second {
			t.Fatalf("the first container runs the second image %s already", second)
		}
	}

	d.rcctl(t, "", "rollout", "restart", id)
	testpoll.Eventually(t, 60*time.Second, func() error {
		for name, c := range containers(t, cli, id) {
			if c.State == "running" && c.ImageID == second {
				return nil
			} else if c.State == "running" {
				return fmt.Errorf("%s runs %s, want %s", name, c.ImageID, second)
			}
		}
		return fmt.Errorf("no container running")
	})
	if n := d.dockerCalls(t, `operation="pull"`); n < 2 {
		t.Errorf("%d pulls for two containers under Always, want 2 or more", n)
	}
}

// On two engines each node pulls for itself: node b's engine, in a network
// namespace of its own, reaches the same registry (an instance on the same
// storage in its namespace) by the same reference.
func TestTwoNodesEachPullTheImageForThemselves(t *testing.T) {
	t.Parallel() // a registry, engines, daemons, ids and labels of its own
	reg := registrytest.Start(t, registrytest.Options{})
	ref := reg.Push(t, dockertest.DemoImage(t), "e2e/twonodes:"+dockertest.RunID(), "")
	n := startTwoNodes(t)
	reg.AlsoIn(t, n.engineB.Netns)
	id := newID("twopull")

	n.a.rcctl(t, controllerJSON(t, id, ref, 4, n.labels), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 2)
	for node, d := range map[string]*daemon{"a": n.a, "b": n.b} {
		if got := d.dockerCalls(t, `operation="pull"`, `result="success"`); got != 1 {
			t.Errorf("node %s pulled %d times for its 2 replicas, want 1", node, got)
		}
	}
	n.a.rcctl(t, "", "delete", id)
	n.waitSpread(t, id, 0, 0)
}
