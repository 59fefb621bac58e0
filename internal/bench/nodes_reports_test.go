package bench

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// reportWrites returns what takeDirty would write: each report key's
// report, or nil for a delete.
func reportWrites(t *testing.T, r *simReports) map[string]*api.NodeReport {
	t.Helper()
	out := map[string]*api.NodeReport{}
	for _, o := range r.takeDirty() {
		key := string(o.op.KeyBytes())
		if o.op.IsDelete() {
			out[key] = nil
			continue
		}
		var rep api.NodeReport
		if err := json.Unmarshal(o.op.ValueBytes(), &rep); err != nil {
			t.Fatal(err)
		}
		out[key] = &rep
	}
	return out
}

func TestSimReportsFollowTheAssignments(t *testing.T) {
	store := registry.NewStore(nil, "/p")
	r := newSimReports(nil, store, t.Logf)
	r.addNode("a", clientv3.LeaseID(1))
	r.addNode("b", clientv3.LeaseID(2))
	put := func(id string, slot int, node string) assignmentChange {
		value, _ := json.Marshal(api.Assignment{Node: node, Revision: 7, TemplateHash: "h1"})
		c, ok := r.parseAssignment(store.AssignmentKey(id, slot), value, true)
		if !ok {
			t.Fatalf("assignment %s/%d not parsed", id, slot)
		}
		return c
	}
	at := time.Unix(100, 0)
	r.apply([]assignmentChange{put("rc-1", 1, "a"), put("rc-1", 2, "a"), put("rc-1", 3, "b")}, at)
	got := reportWrites(t, r)
	ra := got[store.ReportKey("rc-1", "a")]
	if len(got) != 2 || ra == nil || got[store.ReportKey("rc-1", "b")] == nil {
		t.Fatalf("writes %v, want a report of rc-1 on a and on b", got)
	}
	if !slices.Equal(ra.Slots, []int{1, 2}) || len(ra.Tasks) != 2 || ra.Tasks[0].Name != "rc-1-1" || ra.Tasks[0].TemplateHash != "h1" ||
		ra.Status.ReadyReplicas != 2 || ra.Status.ObservedRevision != 7 || ra.Node != "a" {
		t.Errorf("report of a %+v, want slots 1 and 2 running template h1, 2 ready, revision 7", ra)
	}
	if len(reportWrites(t, r)) != 0 {
		t.Error("a report written twice without a change")
	}

	// slot 3 moves from b to a: b has none left, a has three
	r.apply([]assignmentChange{put("rc-1", 3, "a")}, at.Add(time.Second))
	got = reportWrites(t, r)
	if rb, ok := got[store.ReportKey("rc-1", "b")]; !ok || rb != nil {
		t.Errorf("b's report: %v, want it removed", rb)
	}
	if ra := got[store.ReportKey("rc-1", "a")]; ra == nil || !slices.Equal(ra.Slots, []int{1, 2, 3}) {
		t.Errorf("a's report %+v, want slots 1-3", ra)
	}

	// a dead node writes nothing
	r.kill("a")
	c, _ := r.parseAssignment(store.AssignmentKey("rc-1", 1), nil, false)
	r.apply([]assignmentChange{c}, at.Add(2*time.Second))
	if got := reportWrites(t, r); len(got) != 0 {
		t.Errorf("writes of a dead node: %v", got)
	}
	if _, ok := r.parseAssignment("/p/assignments/rc-1", nil, false); ok {
		t.Error("a key without a slot parsed")
	}
}
