package leader

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
)

// TestASpecIsDecidedFromTheNodesAsOfItsRevision: the mirrors hand their
// changes to the loop apart from one another, so a spec can come before a
// cordon etcd committed first. The leader does not decide the spec until
// the nodes and their configs are applied up to its revision, asking etcd
// where their watches are meanwhile: the controller applied after the
// cordon has no slot on the cordoned node.
func TestASpecIsDecidedFromTheNodesAsOfItsRevision(t *testing.T) {
	s := listedLeader(t)
	for _, prefix := range s.viewPrefixes() {
		s.viewRevs[prefix] = 0 // listed below instead
	}
	asked := recordRequests(s.viewAsk)
	nodes, configs := s.store.NodesPrefix(), s.store.NodeConfigPrefix()
	mirrors := s.targets()
	// both listed at revision 5, with nodes a and b
	for _, name := range []string{"a", "b"} {
		data, err := json.Marshal(api.Node{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		mirrors[nodes].Put(registry.KV{Key: s.store.NodeKey(name), Value: data, ModRev: 4})
	}
	mirrors[nodes].(registry.ProgressTarget).Progress(5)
	mirrors[configs].Reset(nil, 5)
	s.deliver()

	// the cordon of b went in at 19 and web at 20; web comes first
	spec, err := json.Marshal(demospec.Controller("web", "demo:1", 4, nil))
	if err != nil {
		t.Fatal(err)
	}
	mirrors[s.store.ControllersPrefix()].Put(registry.KV{Key: s.store.ControllerKey("web"), Value: spec, ModRev: 20, CreateRev: 20})
	s.deliver()
	if op := s.decideNext(t); op != nil {
		t.Fatalf("web was decided before the nodes were applied up to its revision: %+v", op.w.Changes)
	}
	if s.settled() {
		t.Fatal("the leader counts as settled while web waits for the nodes: CaughtUp would answer too soon")
	}
	var want []string
	for len(want) < 2 {
		select {
		case prefix := <-asked:
			if !slices.Contains(want, prefix) {
				want = append(want, prefix)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("etcd was asked about %v only, want the nodes' and the configs' watches", want)
		}
	}

	cordon, err := json.Marshal(api.NodeConfig{Availability: api.NodePause})
	if err != nil {
		t.Fatal(err)
	}
	mirrors[configs].Put(registry.KV{Key: s.store.NodeConfigKey("b"), Value: cordon, ModRev: 19})
	s.deliver()
	if _, queued := queuedIn(s, "web"); queued {
		t.Fatal("web was queued while the nodes are applied up to revision 5 only")
	}
	// etcd says the nodes' watch is at 21, and the configs' at 19
	mirrors[nodes].(registry.ProgressTarget).Progress(21)
	mirrors[configs].(registry.ProgressTarget).Progress(21)
	s.deliver()
	op := s.decideNext(t)
	if op == nil {
		t.Fatal("web was not decided once the nodes were applied up to its revision")
	}
	if len(op.w.Changes) != 4 {
		t.Fatalf("web's decision wrote %d slots, want 4", len(op.w.Changes))
	}
	for _, c := range op.w.Changes {
		if c.Next == nil || c.Next.Node != "a" {
			t.Fatalf("slot %d placed as %+v, want on a: b was cordoned before web was applied", c.Slot, c.Next)
		}
	}
	waitStopped(t, s.viewAsk, "once the nodes are applied up to web")
}

// decideNext decides the controller the queue gives next, as the loop
// does; nil when the queue is empty or the decision writes nothing.
func (s *ReplicationManager) decideNext(t *testing.T) *inflightWrite {
	t.Helper()
	id, ok := s.queue.take()
	if !ok {
		return nil
	}
	defer s.queue.done(id)
	return s.decideController(id)
}
