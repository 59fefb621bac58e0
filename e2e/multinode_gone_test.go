package e2e

// A gone node stays visible (docs/CONTRACT.md, Nodes): once node b's
// manager is killed and its lease is gone, rcctl nodes shows b Gone with
// the containers it last reported (they run on: nobody is left to remove
// them), describe lists them under the controller, the slots placed
// again on a are Moved events, and nodes forget forgets b.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// leads reports whether the manager serving metricsAddr leads.
func leads(t *testing.T, metricsAddr string) bool {
	t.Helper()
	return strings.Contains(httpGet(t, "http://"+metricsAddr+"/metrics"), "\nreplication_manager_is_leader 1\n")
}

func TestTwoNodesGoneNodeStaysVisible(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	n := startTwoNodes(t)
	// the leader records a node it saw go: it must outlive b
	testpoll.Eventually(t, 30*time.Second, func() error {
		if leads(t, n.a.metricsAddr) || leads(t, n.b.metricsAddr) {
			return nil
		}
		return fmt.Errorf("no manager leads yet")
	})
	if leads(t, n.b.metricsAddr) {
		n.b.stop(t) // it resigns: a leads
		n.b.exec(t, n.argsB([]string{"--etcd-servers", n.b.etcdURL, "--leader-elect-lease-duration", multiLease, "--node-grace", multiGrace.String()}))
		testpoll.Eventually(t, 30*time.Second, func() error {
			if !leads(t, n.a.metricsAddr) {
				return fmt.Errorf("a does not lead yet")
			}
			return nil
		})
	}

	id := newID("gone")
	n.a.rcctl(t, controllerJSON(t, id, n.image, 4, n.labels), "apply", "-f", "-")
	n.waitSpread(t, id, 2, 2)
	onB, err := runningSlots(t.Context(), n.cliB, id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, slot := range onB {
		names = append(names, id+"-"+slot)
	}
	slices.Sort(names)

	n.b.kill(t)
	killed := time.Now()
	var nodes string
	took := testpoll.Eventually(t, 60*time.Second, func() error {
		nodes = n.a.rcctl(t, "", "nodes")
		table, below, _ := strings.Cut(nodes, "\n\n")
		for line := range strings.Lines(table) {
			if f := strings.Fields(line); len(f) > 2 && f[0] == "b" {
				if f[1] != api.NodeGone {
					return fmt.Errorf("b is %s", f[1])
				}
				for _, name := range names {
					if !strings.Contains(below, name) {
						return fmt.Errorf("b's last containers lack %s:\n%s", name, nodes)
					}
				}
				return nil
			}
		}
		return fmt.Errorf("b is not listed:\n%s", nodes)
	})
	t.Logf("b shown Gone %s after its manager was killed (lease %s):\n%s", took.Round(time.Millisecond), multiLease, nodes)
	if !strings.Contains(nodes, "b gone ") || !strings.Contains(nodes, "which may still run there") {
		t.Errorf("rcctl nodes does not say b is gone with what may still run there:\n%s", nodes)
	}

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
	if err := json.Unmarshal([]byte(n.a.rcctl(t, "", "nodes", "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, item := range doc.Items {
		if item.Name != "b" {
			continue
		}
		if item.Status.State != api.NodeGone || item.Status.Gone == nil {
			t.Fatalf("b in -o json: %+v, want Gone with its record", item.Status)
		}
		var got []string
		for _, c := range item.Status.Gone.LastContainers {
			if c.Controller == id && c.Image == n.image && c.State == api.StateRunning {
				got = append(got, c.Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, names) || item.Status.Gone.Since.Before(killed.Add(-time.Second)) {
			t.Errorf("b's record: since %v, running containers of %s %q; want %q since after the kill", item.Status.Gone.Since, id, got, names)
		}
	}

	describe := n.a.rcctl(t, "", "describe", id)
	_, gone, ok := strings.Cut(describe, "On gone nodes")
	for _, name := range names {
		if !ok || !strings.Contains(gone, "  "+name+" ") {
			t.Errorf("describe %s does not list %s on gone node b:\n%s", id, name, describe)
		}
	}

	// after the grace the slots run on a, and each move is an event
	n.waitSpreadAfter(t, id, func(a, _ int) bool { return a == 4 })
	testpoll.Eventually(t, 30*time.Second, func() error {
		describe = n.a.rcctl(t, "", "describe", id)
		if got := strings.Count(describe, " moved from b to a (b gone)"); got != len(names) {
			return fmt.Errorf("%d Moved events, want %d:\n%s", got, len(names), describe)
		}
		return nil
	})
	if b := runningOn(t, n.cliB, id); b != len(names) {
		t.Errorf("%d running on b, want its %d left alone: nobody is there to remove them", b, len(names))
	}

	n.a.rcctl(t, "", "nodes", "forget", "b")
	if nodes := n.a.rcctl(t, "", "nodes"); strings.Contains(nodes, "\nb ") {
		t.Errorf("b forgotten, and still listed:\n%s", nodes)
	}
}
