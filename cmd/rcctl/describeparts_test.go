package main

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestDescribeListsEachTaskWithItsContainersAndTheirNode(t *testing.T) {
	reports := []api.NodeReport{{Node: "b", Tasks: []api.ReportedTask{{
		Name: "web-1", ID: "f1", Slot: 1, State: api.StateRunning,
		Parts: []api.ReportedPart{{Name: "web-1.prober", ID: "p1", Container: "prober", State: api.StateRunning, Health: api.HealthHealthy}},
	}}}}
	local := []api.Task{{ID: "p1", Name: "web-1.prober", State: api.StateRunning, Labels: map[string]string{api.LabelSlot: "1"}}}
	rows := containerRows(local, reports, true)
	got := map[string]containerRow{}
	for _, r := range rows {
		got[r.name] = r
	}
	if len(rows) != 2 || got["web-1"].node != "b" || got["web-1.prober"].node != "b" || got["web-1.prober"].slot != "1" {
		t.Errorf("rows %+v, want web-1 and its prober, both on node b in slot 1", rows)
	}
}
