package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// goneNodeB records node b as gone 5s before the test's now, with two
// containers of web and one of api, as the leader does.
func goneNodeB(t *testing.T, e *testEnv) {
	t.Helper()
	g := &api.GoneNode{Name: "b", GoneSince: e.now.Add(-5 * time.Second), Containers: []api.GoneContainer{
		{Controller: "api", Slot: 1, Name: "api-1", Image: "api:2", State: api.StateRunning},
		{Controller: "web", Slot: 2, Name: "web-2", Image: "demo-task:latest", State: api.StateRunning},
		{Controller: "web", Slot: 4, Name: "web-4", Image: "demo-task:latest", State: api.StateExited},
	}}
	if err := e.store.PutGoneNode(t.Context(), nil, g); err != nil {
		t.Fatal(err)
	}
}

func TestNodesShowsAGoneNodeAsGoneSinceWhenWithItsLastContainers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lease := e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now.Add(-time.Minute)}, lease)
	goneNodeB(t, e)

	r := e.runCLI("nodes")

	assertOK(t, r)
	table, below, _ := strings.Cut(r.stdout, "\n\n")
	rows := tableRows(table + "\n")
	if len(rows) != 3 || rows[1][0] != "a" || rows[1][1] != "Ready" || rows[2][0] != "b" || rows[2][1] != "Gone 5s" {
		t.Fatalf("rows %q, want a Ready and b Gone 5s", rows)
	}
	assertContains(t, below,
		"b gone 5s ago (2026-11-29T09:59:55Z); its last containers, which may still run there:\n",
		"  CONTROLLER   NAME    SLOT   IMAGE              STATE\n"+
			"  api          api-1   1      api:2              running\n"+
			"  web          web-2   2      demo-task:latest   running\n"+
			"  web          web-4   4      demo-task:latest   exited\n")

	// registered again, b is Ready, whatever record is left
	e.registerNode(api.Node{Name: "b", RegisteredAt: e.now}, lease)
	r = e.runCLI("nodes")
	assertOK(t, r)
	if strings.Contains(r.stdout, "Gone") || strings.Contains(r.stdout, "last containers") {
		t.Errorf("b registered again is still shown gone:\n%s", r.stdout)
	}
}

func TestNodesJSONHasAGoneNodesStateSinceAndLastContainers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	goneNodeB(t, e)

	r := e.runCLI("nodes", "-o", "json")

	assertOK(t, r)
	var doc struct {
		Items []struct {
			Name   string `json:"name"`
			Status struct {
				State string `json:"state"`
				Gone  *struct {
					Since          time.Time           `json:"since"`
					LastContainers []api.GoneContainer `json:"lastContainers"`
				} `json:"gone"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if len(doc.Items) != 1 || doc.Items[0].Name != "b" || doc.Items[0].Status.State != "Gone" || doc.Items[0].Status.Gone == nil {
		t.Fatalf("items %+v, want b Gone", doc.Items)
	}
	g := doc.Items[0].Status.Gone
	if !g.Since.Equal(e.now.Add(-5*time.Second)) || len(g.LastContainers) != 3 || g.LastContainers[1].Name != "web-2" || g.LastContainers[1].Image != "demo-task:latest" {
		t.Errorf("gone %+v, want since 5s before now with its three containers", g)
	}
}

func TestNodesForgetForgetsOnlyAGoneNode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, e.grantLease(time.Hour))
	goneNodeB(t, e)

	assertFails(t, e.runCLI("nodes", "forget", "a"), `node "a" is registered`)
	assertFails(t, e.runCLI("nodes", "forget", "c"), `node "c" is not a gone node`)
	assertStdout(t, e.runCLI("nodes", "forget", "b"), "node \"b\" forgotten\n")
	r := e.runCLI("nodes")
	assertOK(t, r)
	if strings.Contains(r.stdout, "b ") {
		t.Errorf("b forgotten is still listed:\n%s", r.stdout)
	}
	assertFails(t, e.runCLI("nodes", "forget", "b"), `node "b" is not a gone node`)
	if r := e.runCLI("nodes", "forget"); r.err == nil || !strings.Contains(r.err.Error(), "want exactly one NODE") {
		t.Errorf("forget without a node: %v", r.err)
	}
}

func TestDescribeListsTheControllersLastContainersOnGoneNodes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)
	goneNodeB(t, e)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout, "On gone nodes (their last reports; these may still run there):\n"+
		"  NAME    NODE   GONE     SLOT   IMAGE              STATE\n"+
		"  web-2   b      5s ago   2      demo-task:latest   running\n"+
		"  web-4   b      5s ago   4      demo-task:latest   exited\n")
	if strings.Contains(r.stdout, "api-1") {
		t.Errorf("describe web lists api's container on b:\n%s", r.stdout)
	}
}
