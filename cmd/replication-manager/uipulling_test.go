package main

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

func TestStatusPageShowsTheSlotsWaitingForAPull(t *testing.T) {
	since := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	v := registry.ControllerView{ID: "web", Node: "a",
		Pulling:   []api.PullingSlot{{Slot: 1, Image: "reg:5000/web:2", Since: since}},
		Elsewhere: []api.NodeReport{{Node: "b", Pulling: []api.PullingSlot{{Slot: 2, Image: "reg:5000/web:2", Since: since}}}},
	}
	items := containerItems(v)
	if len(items) != 2 {
		t.Fatalf("items %+v, want the two pulling slots", items)
	}
	for i, node := range []string{"a", "b"} {
		it := items[i]
		if it.Node != node || it.State != ctlview.StatePulling || it.Image != "reg:5000/web:2" || !it.Created.Equal(since) {
			t.Errorf("item %d = %+v, want slot %d on %s pulling reg:5000/web:2 since %s", i, it, i+1, node, since)
		}
	}
}
