package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

func TestDescribeListsTheSlotsWaitingForAPullWithHowLong(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	c := &cli{now: func() time.Time { return now }}
	reports := []api.NodeReport{
		{Node: "b", Pulling: []api.PullingSlot{{Slot: 2, Image: "reg:5000/web:2", Since: now.Add(-12 * time.Second)}}},
		{Node: "a", Pulling: []api.PullingSlot{{Slot: 1, Image: "reg:5000/web:2", Since: now.Add(-3 * time.Second)}}},
	}
	var out bytes.Buffer
	c.printPulling(&out, reports)
	want := "Pulling:\n" +
		"  SLOT   NODE   IMAGE            FOR\n" +
		"  1      a      reg:5000/web:2   3s\n" +
		"  2      b      reg:5000/web:2   12s\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	c.printPulling(&out, []api.NodeReport{{Node: "a"}})
	if out.Len() != 0 {
		t.Errorf("nothing pulling printed %q, want nothing", out.String())
	}
}

func TestGetWideCountsTheSlotsPullingPerNode(t *testing.T) {
	reports := []api.NodeReport{
		{Node: "a", Status: api.ReplicationControllerStatus{ID: "web"}, Pulling: []api.PullingSlot{{Slot: 1}, {Slot: 3}}},
		{Node: "b", Status: api.ReplicationControllerStatus{ID: "web"}, Tasks: []api.ReportedTask{{Name: "web-2"}}},
		{Node: "a", Status: api.ReplicationControllerStatus{ID: "api"}},
	}
	got := pullingCounts(reports)
	if len(got) != 1 || formatNodeCounts(got["web"]) != "a:2" {
		t.Errorf("pulling counts %v, want web a:2 only", got)
	}
}
