package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// config reads node's config as the leader would.
func (e *testEnv) config(node string) api.NodeConfig {
	e.t.Helper()
	c, _, err := e.store.GetNodeConfig(context.Background(), node)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func TestCordonAndUncordonWriteTheNodesAvailability(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.registerNode(api.Node{Name: "a", Labels: map[string]string{"zone": "a"}, RegisteredAt: e.now}, e.grantLease(time.Hour))

	r := e.runCLI("cordon", "a")
	assertStdout(t, r, "node/a cordoned\n")
	if c := e.config("a"); c.Availability != api.NodePause {
		t.Errorf("after cordon the key holds %+v, want pause", c)
	}
	assertStdout(t, e.runCLI("cordon", "a"), "node/a already cordoned\n")
	r = e.runCLI("nodes")
	assertOK(t, r)
	if rows := tableRows(r.stdout); len(rows) != 2 || rows[1][1] != "Ready,Paused" {
		t.Errorf("nodes after cordon: %q, want a Ready,Paused", rows)
	}

	assertStdout(t, e.runCLI("uncordon", "a"), "node/a uncordoned\n")
	if c := e.config("a"); c.Effective() != api.NodeActive {
		t.Errorf("after uncordon the key holds %+v, want active", c)
	}
	assertFails(t, e.runCLI("cordon"), "cordon: takes one NODE")
	assertFails(t, e.runCLI("cordon", "a/b"), "node name")
}

func TestLabelNodeSetsAndRemovesLabelsAndNodesSaysWhereEachComesFrom(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.registerNode(api.Node{Name: "b", Labels: map[string]string{"zone": "b", "disk": "ssd"}, RegisteredAt: e.now}, e.grantLease(time.Hour))

	assertStdout(t, e.runCLI("label", "node", "b", "zone=c", "rack=r1"), "node/b labeled\n")
	assertStdout(t, e.runCLI("label", "node", "b", "rack-"), "node/b labeled\n")
	if c := e.config("b"); len(c.Labels) != 1 || c.Labels["zone"] != "c" {
		t.Errorf("the key holds labels %v, want zone=c alone", c.Labels)
	}
	r := e.runCLI("nodes")
	assertOK(t, r)
	if rows := tableRows(r.stdout); len(rows) != 2 || rows[1][2] != "disk=ssd,zone=c(key)" {
		t.Errorf("nodes: %q, want LABELS disk=ssd,zone=c(key)", rows)
	}
	r = e.runCLI("nodes", "-o", "json")
	assertOK(t, r)
	var list struct {
		Items []nodeItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	st := list.Items[0].Status
	if st.Availability != api.NodeActive || st.Labels["zone"] != "c" || st.LabelSources["zone"] != "key" || st.LabelSources["disk"] != "flag" {
		t.Errorf("json status %+v, want active, zone=c from the key, disk from the flag", st)
	}

	assertFails(t, e.runCLI("label", "node", "b", "zone"), "want KEY=VALUE or KEY-")
	assertFails(t, e.runCLI("label", "node", "b", "zone=c", "zone-"), "given twice")
	assertFails(t, e.runCLI("label", "pod", "b", "zone=c"), "want label node NODE")
}

func TestDrainDryRunListsTheMovesWithTheirPacingAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lease := e.grantLease(time.Hour)
	for _, n := range []string{"a", "b"} {
		e.registerNode(api.Node{Name: n, RegisteredAt: e.now}, lease)
	}
	e.create(newController("web", 2))
	e.create(newController("one", 1))
	e.assign("web", 1, "a")
	e.assign("web", 2, "a")
	e.assign("one", 1, "a")
	started := e.now.Add(-time.Hour)
	e.report(lease, "a", "web", reported("web", 1, started), reported("web", 2, started))
	e.report(lease, "a", "one", reported("one", 1, started))

	r := e.runCLI("drain", "a", "--dry-run")

	assertOK(t, r)
	assertContains(t, r.stdout,
		"node/a would be drained (dry run):\n",
		"one: 1 slot(s) on a, moved 1 at a time (max(1, maxUnavailable))",
		"  warning: replicas 1: the move costs the only replica",
		"  move one-1 a → b\n",
		"web: 2 slot(s) on a, moved 1 at a time",
		"  move web-1 a → b\n", "  move web-2 a → b\n")
	if c := e.config("a"); c.Availability != "" {
		t.Errorf("a dry run wrote %+v", c)
	}
}

func TestDrainOfAnEmptyNodeEndsAtOnceAndLeavesItDrained(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, e.grantLease(time.Hour))

	r := e.runCLI("drain", "a")

	assertStdout(t, r, "node/a draining\nnode/a drained\n")
	if c := e.config("a"); c.Availability != api.NodeDrain {
		t.Errorf("the key holds %+v, want drain", c)
	}
}

func TestADrainThatCannotFinishNamesEachSlotAndWhy(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, e.grantLease(time.Hour))
	e.create(newController("web", 2))
	e.assign("web", 1, "a")
	e.assign("web", 2, "a")
	e.putStatus(&api.ReplicationControllerStatus{ID: "web", Replicas: 2, Conditions: []api.Condition{{
		Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonUnschedulable,
		Message: "slot(s) 1, 2 fit no node: no node that matches takes new slots (a: draining)"}}})

	r := e.runCLI("drain", "a", "--timeout", "60s")

	assertFails(t, r, "drain of a cannot finish: no other node can take web-1, web-2 (slot(s) 1, 2 fit no node: no node that matches takes new slots (a: draining))")
	assertContains(t, r.stdout, "a: 2 slot(s) assigned, 0 container(s) left\n")
}

func TestADrainThatTimesOutNamesTheSlotsLeft(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, e.grantLease(time.Hour))
	e.create(newController("one", 1))
	e.assign("one", 1, "a")
	e.assign("web", 3, "a")
	e.assign("web", 4, "a")
	go func() {
		time.Sleep(500 * time.Millisecond)
		// the leader moved it (not e.assign: no Fatal outside the test's goroutine)
		if _, err := e.client.Put(t.Context(), e.store.AssignmentKey("web", 4), "b"); err != nil {
			t.Error(err)
		}
	}()

	r := e.runCLI("drain", "a", "--timeout", "2500ms")

	assertFails(t, r, "drain of a timed out after 2.5s with 2 slot(s) assigned and 0 container(s) left: one-1, web-3")
	assertContains(t, r.stdout, "warning: one has replicas 1: its move costs its only replica", "web-4: a → b\n")
}

func TestNamesSlotMatchesWholeNumbersOnly(t *testing.T) {
	msg := "slot(s) 10, 2 fit no node: node 1 is draining"
	if namesSlot(msg, 1) || !namesSlot(msg, 10) || !namesSlot(msg, 2) {
		t.Error("namesSlot matched a part of a number, or missed one")
	}
}
