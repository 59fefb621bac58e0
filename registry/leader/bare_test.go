package leader

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// Issue 26, item 5: an assignment in the old bare-node-name format was
// read as the current template, so the next template change rolled every
// such slot at once (its node replaced them all, stop first). It runs the
// template its node reports, and is rolled within the bounds.
func TestABareAssignmentRunsTheTemplateItsNodeReports(t *testing.T) {
	sp := &schedSpec{spec: registry.Spec{ID: "web", ModRevision: 40}, hash: "new"}
	bare := registry.SlotAssignment{Assignment: api.Assignment{Node: "a"}, Rev: 7}
	reported := []decide.Container{
		{Node: "a", Slot: 1, Named: true, Live: true, Hash: "old"},
		{Node: "a", Slot: 2, Named: true, Live: true, Hash: "new"},
		{Node: "b", Slot: 3, Named: true, Live: true, Hash: "old"}, // another node's
	}
	for _, tt := range []struct {
		slot     int
		hash     string
		revision int64
	}{
		{1, "old", 0},  // outdated: the leader rolls it
		{2, "new", 40}, // current already
		{3, "new", 40}, // nothing on its node: created with the current template
	} {
		got := bareAssignment(tt.slot, bare, sp, reported)
		if got.Node != "a" || got.Hash != tt.hash || got.Revision != tt.revision || got.ModRev != 7 {
			t.Errorf("slot %d reads as %+v, want node a, template %s at revision %d", tt.slot, got, tt.hash, tt.revision)
		}
	}
}
