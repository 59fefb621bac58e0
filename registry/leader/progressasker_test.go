package leader

import (
	"context"
	"maps"
	"slices"
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

// TestCaughtUpAsksWhereEveryWatchBehindIsUntilTheLoopHasItAll: a CaughtUp
// call asks etcd about each watch whose mirror has not handed over the
// revision, and, once the leader writes meanwhile, up to its own write's
// revision too; it returns, and the asking stops, once every mirror has.
func TestCaughtUpAsksWhereEveryWatchBehindIsUntilTheLoopHasItAll(t *testing.T) {
	s := listedLeader(t)
	asked := recordRequests(s.caughtUpAsk)
	waited := make(chan error, 1)
	go func() { waited <- s.waitFor(t.Context(), 20) }()
	(<-s.mailbox.calls)() // the loop takes the waiter

	targets := s.targets()
	progress := func(rev int64, prefixes ...string) {
		for _, prefix := range prefixes {
			targets[prefix].(registry.ProgressTarget).Progress(rev)
		}
	}
	prefixes := mirrored(s.store)
	wantAsked(t, asked, prefixes...)
	progress(20, prefixes[:4]...)
	wantAsked(t, asked, prefixes[4]) // asked again while unanswered, and only that one

	s.wrote(writeResult{rev: 25}) // the leader's own write, whose echo the call waits for too
	wantAsked(t, asked, prefixes...)
	progress(25, prefixes...)
	s.deliver()
	s.answerWaiters() // as the loop does once it has nothing left to do
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CaughtUp still waits once every mirror has handed over the leader's write")
	}
	waitStopped(t, s.caughtUpAsk, "once every mirror has handed over revision 25")
}

// wantAsked waits until etcd has been asked about each of prefixes, and
// about no other.
func wantAsked(t *testing.T, asked <-chan string, prefixes ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, prefix := range prefixes {
		left[prefix] = true
	}
	deadline := time.After(10 * time.Second)
	for len(left) > 0 {
		select {
		case prefix := <-asked:
			if !slices.Contains(prefixes, prefix) {
				t.Fatalf("etcd asked where the watch of %s is, which has handed over the revision", prefix)
			}
			delete(left, prefix)
		case <-deadline:
			t.Fatalf("etcd never asked where the watches of %v are", slices.Collect(maps.Keys(left)))
		}
	}
}
