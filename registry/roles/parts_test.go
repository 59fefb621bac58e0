package roles

// A manager can play one of its two parts alone (RunLeader, RunNode). The
// external tests of registry/agent run their leaders so, and step the
// node's manager of NodeManager by hand.

import (
	"errors"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// partOptions are the options of a manager of node a on store.
func partOptions(t *testing.T, store *registry.Store) Options {
	t.Helper()
	return Options{
		Client: store.Client(), Store: store, Logger: testLogger(t), TaskControl: &taskcontrol.Fake{},
		Node: api.Node{Name: "a", EngineID: "engine-a"}, Identity: "rm-a", LeaseDuration: 60 * time.Second,
		LeaderElect: true, SyncPeriod: time.Hour,
	}
}

func TestRunLeaderLeadsWithoutActingForItsNode(t *testing.T) {
	store := newStore(t, testClient(t), "test")
	r := New(partOptions(t, store))
	runInBackground(t, r.RunLeader)
	testpoll.Until(t, waitTimeout, "the manager to lead", func() bool { return r.Leader() != nil })
	if _, err := store.GetNode(t.Context(), "a"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("node a's registration: %v, want none: the manager only leads", err)
	}
	if r.Acts() || r.Agent() != nil {
		t.Error("the manager acts for its node while it only leads")
	}
}

func TestRunNodeActsForItsNodeWithoutLeading(t *testing.T) {
	store := newStore(t, testClient(t), "test")
	r := New(partOptions(t, store))
	runInBackground(t, r.RunNode)
	testpoll.Until(t, waitTimeout, "the manager to act for node a", func() bool { return r.Agent() != nil })
	if _, err := store.GetNode(t.Context(), "a"); err != nil {
		t.Errorf("node a's registration: %v, want it registered", err)
	}
	if r.Leads() || r.Leader() != nil {
		t.Error("the manager leads while it only acts for its node")
	}
}
