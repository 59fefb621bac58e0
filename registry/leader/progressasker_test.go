package leader

import (
	"context"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/registry"
)

// TestAProgressRequestLeftUnansweredIsAskedAgain: etcd drops a progress
// request while a watch of its stream has not caught up, so the leader
// asks again until the mirror has handed over the revision wanted, and
// then stops asking.
func TestAProgressRequestLeftUnansweredIsAskedAgain(t *testing.T) {
	s := listedLeader(t)
	reports := s.store.ReportsPrefix()
	asked := recordRequests(s.reportsAsk)
	s.reportsAsk.want(10)
	for i := range 3 { // the first request, and two more while none is answered
		select {
		case prefix := <-asked:
			if prefix != reports {
				t.Fatalf("request %d was for %s, want the reports' watch (%s)", i+1, prefix, reports)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("etcd was asked %d times, want a request asked again while unanswered", i)
		}
	}

	s.targets()[reports].(registry.ProgressTarget).Progress(10)
	waitStopped(t, s.reportsAsk, "once the reports' mirror has handed over revision 10")
	s.deliver()
	if s.reportsRev != 10 {
		t.Fatalf("the reports are as of %d, want 10: the progress notification's revision", s.reportsRev)
	}
}

// recordRequests has a send the prefixes it asks about, instead of
// asking etcd.
func recordRequests(a *progressAsker) <-chan string {
	asked := make(chan string, 64)
	a.request = func(_ context.Context, prefix string) error {
		select {
		case asked <- prefix:
		default:
		}
		return nil
	}
	return asked
}

// waitStopped waits until a asks no more, which it should by now
// (after says when).
func waitStopped(t *testing.T, a *progressAsker, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.running.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("the leader still asks etcd where %v are %s", a.prefixes, after)
		}
		time.Sleep(time.Millisecond)
	}
}
