package agent_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/roles"
)

func TestMetricsMoveWhenASyncHappens(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, roles.Options{Registerer: reg})
	h.run(t)
	h.create(t, newController("web", 3))
	h.waitForNames(t, "web-1", "web-2", "web-3")

	// each counter moves once its own step is done (the Docker call's
	// return, the container's creation as the sync sees it): wait for both
	testpoll.Until(t, waitTimeout, "3 create calls, 3 containers created and a finished sync counted", func() bool {
		n, err := testutil.GatherAndCount(reg, "replication_manager_sync_duration_seconds")
		return err == nil && n > 0 &&
			counter(t, reg, "replication_manager_docker_calls_total", "operation", "create", "result", "success") == 3 &&
			counter(t, reg, "replication_manager_containers_total", "operation", "create", "result", "success") == 3
	})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		seen[f.GetName()] = true
	}
	for _, name := range []string{
		"replication_manager_sync_duration_seconds",
		"replication_manager_docker_calls_total",
		"replication_manager_docker_call_duration_seconds",
		"replication_manager_containers_total",
		"workqueue_adds_total",
		"workqueue_depth",
		"workqueue_queue_duration_seconds",
		"workqueue_work_duration_seconds",
	} {
		if !seen[name] {
			t.Errorf("metric %s not exported", name)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "replication_manager_sync_duration_seconds"); err != nil || n == 0 {
		t.Errorf("sync duration series = %d (%v), want some", n, err)
	}
	var sb strings.Builder
	for _, f := range families {
		if f.GetName() == "workqueue_adds_total" {
			sb.WriteString(f.String())
		}
	}
	if !strings.Contains(sb.String(), `value:"controllers"`) {
		t.Errorf("workqueue_adds_total has no series for the controllers queue: %s", sb.String())
	}
}

func TestManagersOfSuccessiveTermsShareTheirMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, roles.Options{Registerer: reg})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil { // the first term's manager creates web-1
		t.Fatal(err)
	}
	// the next term's manager, on the same registry, replaces web-1
	h.rm = h.newNodeManager(t, roles.Options{Registerer: reg})
	t.Cleanup(h.rm.StopQueues)
	h.rm.SetRegistryID(testRegistryID)
	h.setSpec(newController("web", 1))
	if err := h.fake.DeleteTask(t.Context(), h.fake.Tasks()[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := counter(t, reg, "replication_manager_containers_total", "operation", "create", "result", "success"); got != 2 {
		t.Errorf("containers created = %v, want 2: both managers' creates on the same series", got)
	}
}
