package main

import (
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// campaign has a manager of identity take part in the leader election,
// as the daemon's managers do, until the test ends; the first to campaign
// leads.
func (e *testEnv) campaign(identity string) {
	e.t.Helper()
	session, err := concurrency.NewSession(e.client, concurrency.WithTTL(60))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = session.Close() })
	if err := concurrency.NewElection(session, e.store.LeaderElectionKey()).Campaign(e.t.Context(), identity); err != nil {
		e.t.Fatal(err)
	}
}

func TestGetAndNodesSayWhenNoManagerLeads(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 1))
	e.registerNode(api.Node{Name: "a", Manager: "rm-a"}, e.grantLease(time.Minute))
	const warning = "warning: no manager leads"

	// a lone manager, elections off: nothing tells whether it runs
	e.publish(registry.NewPolicy(api.SecurityPolicy{}, 1000, "rm-a"))
	for _, args := range [][]string{{"get"}, {"nodes"}} {
		if r := e.runCLI(args...); strings.Contains(r.stderr, warning) {
			t.Errorf("rcctl %s without elections: stderr %q, want no warning", args[0], r.stderr)
		}
	}

	elected := registry.NewPolicy(api.SecurityPolicy{}, 1000, "rm-a")
	elected.Elected = true
	e.publish(elected)
	for _, args := range [][]string{{"get"}, {"get", "-o", "wide"}, {"get", "web", "-o", "json"}, {"nodes"}} {
		r := e.runCLI(args...)
		assertOK(t, r)
		assertContains(t, r.stderr, warning, e.store.LeaderElectionKey())
	}

	e.campaign("rm-a")
	r := e.runCLI("get")
	assertOK(t, r)
	if strings.Contains(r.stderr, warning) {
		t.Errorf("rcctl get while rm-a leads: stderr %q, want no warning", r.stderr)
	}
	r = e.runCLI("nodes", "-o", "wide")
	assertOK(t, r)
	assertContains(t, r.stdout, "rm-a (leader)")
	r = e.runCLI("nodes", "-o", "json")
	assertOK(t, r)
	assertContains(t, r.stdout, `"leader": true`)
}
