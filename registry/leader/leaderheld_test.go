package leader

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/registry/decide"
)

// Issue 26, item 4: a node's reports vanish with its lease, and a slot
// they held (its container still stopping there, or left running by a
// manager stopped by SIGTERM or killed) was placed on another node at
// once. It stays held until the node has been gone for the grace, in
// whichever order the mirrors bring the lease's deletions.
func TestASlotOnANodeWhoseLeaseWentIsHeldForTheGrace(t *testing.T) {
	const grace = time.Minute
	for _, reportsFirst := range []bool{true, false} {
		now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
		s := goneLeader(t, &now)
		s.opts.NodeGrace = grace
		s.testPutSpec(t, "web", 1)
		s.testPutNode(t, "a")
		s.testPutNode(t, "b")
		// slot 1 was taken off b; its container still runs there
		s.testPutReport(t, "web", "b", 3, task("web-1", 1, "demo:1"))

		const leaseGone = 9
		if reportsFirst {
			s.delReport(s.store.ReportKey("web", "b"), leaseGone)
			s.deliver()
		}
		s.delNode(s.store.NodeKey("b"), leaseGone)
		s.deliver()
		if !reportsFirst {
			s.delReport(s.store.ReportKey("web", "b"), leaseGone)
			s.deliver()
		}
		went := now
		if placed := decideWeb(s, now, grace, went); placed != "" {
			t.Errorf("reports first %v: slot 1 placed on %s within b's grace", reportsFirst, placed)
		}
		if placed := decideWeb(s, went.Add(grace), grace, went); placed != "a" {
			t.Errorf("reports first %v: slot 1 placed on %q once b's grace is over, want a", reportsFirst, placed)
		}
	}
}

// decideWeb decides web at now over nodes a (alive) and b (gone since
// went; registered when went is zero) and returns the node slot 1 is
// placed on ("" for none).
func decideWeb(s *ReplicationManager, now time.Time, grace time.Duration, went time.Time) string {
	s.now = func() time.Time { return now }
	in, _, _ := s.input("web")
	in.Nodes = []decide.Node{{Name: "a", Alive: true}, {Name: "b", Alive: went.IsZero(), GoneSince: went}}
	in.Grace = grace
	for _, c := range decide.Decide(in).Changes {
		if c.Slot == 1 && c.New != nil {
			return c.New.Node
		}
	}
	return ""
}
