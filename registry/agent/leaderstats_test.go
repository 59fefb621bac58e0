package agent_test

import (
	"testing"

	"github.com/replication-manager/replication-manager/registry/roles"
)

func TestControllerStatsCarryTheDesiredCountAndTheLastStatus(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.create(t, newController("web", 3))
	if err := h.lead(t.Context()); err != nil {
		t.Fatal(err)
	}
	stats := h.sched.ControllerStats()
	if len(stats) != 1 || stats[0].ID != "web" || stats[0].Desired != 3 {
		t.Fatalf("stats = %+v, want web wanting 3", stats)
	}
	if stats[0].Status == nil || stats[0].Status.ID != "web" {
		t.Errorf("status = %+v, want the status the leader wrote", stats[0].Status)
	}
}
