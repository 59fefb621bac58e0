package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/internal/testclock"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// testPuller is a puller whose pulls block until the test releases them.
type testPuller struct {
	*puller
	clock   *testclock.Clock
	mu      sync.Mutex
	started []string
	release chan error
	woken   chan string
	events  chan note
}

func newTestPuller(t *testing.T) *testPuller {
	t.Helper()
	tp := &testPuller{clock: testclock.New(time.Now()), release: make(chan error), woken: make(chan string, 100), events: make(chan note, 100)}
	tp.puller = newPuller(func(ctx context.Context, image string) error {
		tp.mu.Lock()
		tp.started = append(tp.started, image)
		tp.mu.Unlock()
		select {
		case err := <-tp.release:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, tp.clock.Now, func(id string) { tp.woken <- id }, func(_ string, ev note) { tp.events <- ev })
	t.Cleanup(tp.stop)
	return tp
}

func (tp *testPuller) pulls() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]string(nil), tp.started...)
}

// waitPulls waits until n pulls have started.
func (tp *testPuller) waitPulls(t *testing.T, n int) {
	t.Helper()
	testpoll.Eventually(t, 5*time.Second, func() error {
		if got := len(tp.pulls()); got != n {
			return fmt.Errorf("%d pulls started, want %d", got, n)
		}
		return nil
	})
}

func TestConcurrentWantsOfOneImageShareOnePull(t *testing.T) {
	tp := newTestPuller(t)
	since := tp.clock.Now()
	for _, id := range []string{"web", "api", "web"} {
		if w := tp.want(id, "reg/app:1", since, false); !w.pulling {
			t.Fatalf("%s: %+v, want a pull under way", id, w)
		}
	}
	tp.waitPulls(t, 1)
	tp.clock.Advance(3 * time.Second)
	tp.release <- nil
	woken := map[string]bool{<-tp.woken: true, <-tp.woken: true}
	if !woken["web"] || !woken["api"] {
		t.Errorf("woken %v, want web and api", woken)
	}
	if ev := <-tp.events; ev.reason != "Pulled" || !strings.Contains(ev.message, "in 3s") {
		t.Errorf("event %+v, want Pulled with its duration", ev)
	}
	if w := tp.want("web", "reg/app:1", since, false); !w.ready {
		t.Errorf("after the pull: %+v, want ready", w)
	}
	if got := tp.pulls(); len(got) != 1 {
		t.Errorf("pulls %v, want one", got)
	}
}

func TestAtMostThreePullsRunAtOnce(t *testing.T) {
	tp := newTestPuller(t)
	for i := range 5 {
		tp.want("web", fmt.Sprintf("reg/app:%d", i), tp.clock.Now(), false)
	}
	tp.waitPulls(t, pullsPerNode)
	time.Sleep(50 * time.Millisecond)
	if got := len(tp.pulls()); got != pullsPerNode {
		t.Fatalf("%d pulls under way, want %d", got, pullsPerNode)
	}
	tp.release <- nil
	tp.waitPulls(t, pullsPerNode+1)
	for range pullsPerNode + 1 {
		tp.release <- nil
	}
	tp.waitPulls(t, 5)
}

func TestAFailedPullBacksOffDoublingTo5Minutes(t *testing.T) {
	tp := newTestPuller(t)
	var delays []time.Duration
	for i := range 12 {
		w := tp.want("web", "reg/app:1", tp.clock.Now(), false)
		if !w.pulling {
			t.Fatalf("attempt %d: %+v, want a pull started", i, w)
		}
		tp.release <- errors.New("unauthorized: authentication required")
		<-tp.woken
		if ev := <-tp.events; ev.reason != "PullFailed" || !strings.Contains(ev.message, "unauthorized") {
			t.Fatalf("event %+v, want PullFailed with the engine's words", ev)
		}
		w = tp.want("web", "reg/app:1", tp.clock.Now(), false)
		if w.err == nil || w.pulling {
			t.Fatalf("attempt %d: right after the failure: %+v, want the failure and no pull", i, w)
		}
		delays = append(delays, w.retryIn)
		tp.clock.Advance(w.retryIn)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300}
	for i := range want {
		if delays[i] != want[i]*time.Second {
			t.Fatalf("delays %v, want %v seconds", delays, want)
		}
	}
	if got := len(tp.pulls()); got != 12 {
		t.Errorf("%d pulls, want 12: none during a backoff", got)
	}
}

func TestAlwaysWantsAPullBegunSinceItAsked(t *testing.T) {
	tp := newTestPuller(t)
	tp.want("web", "reg/app:1", tp.clock.Now(), false)
	tp.waitPulls(t, 1)
	tp.clock.Advance(time.Second)
	asked := tp.clock.Now()
	// the pull under way began before the ask: it is joined, and once it
	// ends another one is needed
	if w := tp.want("api", "reg/app:1", asked, true); !w.pulling {
		t.Fatalf("%+v, want the pull under way", w)
	}
	tp.release <- nil
	<-tp.woken
	<-tp.woken
	if w := tp.want("api", "reg/app:1", asked, true); !w.pulling {
		t.Fatalf("after a pull begun before the ask: %+v, want a new pull", w)
	}
	tp.waitPulls(t, 2)
	tp.release <- nil
	<-tp.woken
	if w := tp.want("api", "reg/app:1", asked, true); !w.ready {
		t.Errorf("after a pull begun since: %+v, want ready", w)
	}
}
