package e2e

// End-to-end test of healthCheck.onUnhealthy (issue 28, item 1): unhealthy
// tasks are replaced on the leader's order, one slot down at a time, and a
// controller that does not ask keeps its unhealthy containers.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestUnhealthyReplicasAreReplacedOneSlotAtATime(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t, "--sync-period", "2s")
	replace, keep := newID("sick-replace"), newID("sick-keep")

	// every task that runs at sickAt turns unhealthy then, together; its
	// replacements, started later, stay healthy
	sickAt := time.Now().Add(20 * time.Second)
	sickly := func(id string, replicas int, onUnhealthy string) *api.ReplicationController {
		rc := controller(id, image, replicas, labels)
		c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
		c.Command = append(c.Command, "--unhealthy-at", sickAt.UTC().Format(time.RFC3339Nano))
		c.HealthCheck = &api.HealthCheck{Test: api.Command{"CMD", "/task", "healthcheck"},
			Interval: api.Duration(time.Second), Timeout: api.Duration(2 * time.Second), Retries: 2, OnUnhealthy: onUnhealthy}
		return rc
	}
	d.rcctl(t, mustJSON(t, sickly(replace, 3, api.OnUnhealthyReplace)), "apply", "-f", "-")
	d.rcctl(t, mustJSON(t, sickly(keep, 1, "")), "apply", "-f", "-")
	first := waitForHealthy(t, cli, replace, 3)
	kept := waitForHealthy(t, cli, keep, 1)
	if time.Now().After(sickAt) {
		t.Fatalf("the replicas were healthy only after %s, when they were to turn unhealthy", sickAt)
	}

	worst, stopSampling := sampleSlotsDown(t, cli, replace, 3)
	defer stopSampling()
	sawUnhealthy := false
	testpoll.Eventually(t, time.Until(sickAt)+60*time.Second, func() error {
		if st := d.status(t, replace); st != nil {
			if c := st.FindCondition(api.ConditionUnhealthy); c != nil && c.Status == "True" {
				sawUnhealthy = true
			}
		}
		now := containers(t, cli, replace)
		for slot := 1; slot <= 3; slot++ {
			name := fmt.Sprintf("%s-%d", replace, slot)
			c, ok := now[name]
			switch {
			case !ok || c.State != "running":
				return fmt.Errorf("%s not running", name)
			case c.ID == first[name].ID:
				return fmt.Errorf("%s still runs its first container %s (%s)", name, c.ID[:12], c.Status)
			}
		}
		return nil
	})
	took := time.Since(sickAt)
	stopSampling()
	if w := worst(); w > 1 {
		t.Errorf("%d slots at once had no running container, want at most 1 (max(1, maxUnavailable 0))", w)
	}
	if !sawUnhealthy {
		t.Error("the status never showed Unhealthy")
	}
	t.Logf("every slot replaced %s after the replicas turned unhealthy", took.Round(time.Second))
	if out := d.rcctl(t, "", "describe", replace); !strings.Contains(out, api.ReasonUnhealthyReplaced) || !strings.Contains(out, "last health check output") {
		t.Errorf("describe shows no %s event with the health check's output:\n%s", api.ReasonUnhealthyReplaced, out)
	}

	// the controller that does not ask keeps its unhealthy container
	for name, c := range containers(t, cli, keep) {
		if c.ID != kept[name].ID || !strings.Contains(c.Status, "(unhealthy)") {
			t.Errorf("%s of a controller without onUnhealthy is %s %q, want its first container %s, unhealthy", name, c.ID[:12], c.Status, kept[name].ID[:12])
		}
	}
}

// sampleSlotsDown samples, every 50ms, how many of slots 1..replicas of id
// have no running container, until stop is called; worst returns the most
// seen at once.
func sampleSlotsDown(t *testing.T, cli dockerClient, id string, replicas int) (worst func() int, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	most := 0
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			list, err := cli.ContainerList(ctx, container.ListOptions{
				Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id), filters.Arg("status", "running")),
			})
			if err == nil {
				running := map[string]bool{}
				for _, c := range list {
					for _, n := range c.Names {
						running[strings.TrimPrefix(n, "/")] = true
					}
				}
				down := 0
				for slot := 1; slot <= replicas; slot++ {
					if !running[fmt.Sprintf("%s-%d", id, slot)] {
						down++
					}
				}
				mu.Lock()
				most = max(most, down)
				mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	worst = func() int {
		mu.Lock()
		defer mu.Unlock()
		return most
	}
	return worst, stop
}
