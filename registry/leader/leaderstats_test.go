package leader

import (
	"testing"
	"time"
)

// A node that registered and holds nothing yet is among the nodes the
// leader knows: the page's cluster view and the node metrics show it.
func TestARegisteredNodeWithNothingAssignedIsInTheNodeStats(t *testing.T) {
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	s := goneLeader(t, &now)
	s.testPutNode(t, "idle")
	stats := s.nodeStats()
	if len(stats) != 1 || stats[0].Name != "idle" || !stats[0].Alive {
		t.Fatalf("node stats %+v, want the idle node, alive", stats)
	}
}
