package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testclock"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/taskcontrol"
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

// The engine lacks the image and the registry refuses: the controller's
// first minute costs the engine at most 10 calls (image checks, pulls and
// creates), however often it is synced, and its status names the
// engine's reason; once the registry lets the pull through, every
// replica starts after one more pull.
func TestUnpullableImageCostsAtMost10CallsInAMinute(t *testing.T) {
	h := newHarness(t, Options{})
	h.setSpec(newController("web", 3))
	var pulled, refuse atomic.Bool
	refuse.Store(true)
	h.fake.ImageErr = func(image string) error {
		if !pulled.Load() {
			return fmt.Errorf("%w: %s", taskcontrol.ErrImageNotFound, image)
		}
		return nil
	}
	h.fake.PullErr = func(_ context.Context, image string) error {
		if refuse.Load() {
			return fmt.Errorf("pull %s: unauthorized: authentication required", image)
		}
		pulled.Store(true)
		return nil
	}
	calls := func() int { c := h.fake.Counts(); return c.Image + c.Pull + c.Create }
	for range 600 { // a sync every 100ms for a minute
		_ = h.sync(t, "web")
		h.idlePulls(t)
		h.clock.Advance(100 * time.Millisecond)
	}
	if n := calls(); n > 10 || h.fake.Counts().Create != 0 {
		t.Errorf("%+v: %d calls in a minute, want at most 10 and no create", h.fake.Counts(), n)
	}
	c := h.status(t, "web").FindCondition(api.ConditionReplicaFailure)
	if c == nil || c.Reason != api.ReasonPullFailed || !strings.Contains(c.Message, "unauthorized") {
		t.Fatalf("ReplicaFailure = %+v, want PullFailed saying unauthorized", c)
	}

	refuse.Store(false)
	h.clock.Advance(pullMaxDelay)
	for range 3 {
		_ = h.sync(t, "web")
		h.idlePulls(t)
	}
	if h.fake.Len() != 3 {
		t.Fatalf("%d containers after the pull went through, want 3 (%v)", h.fake.Len(), h.fake.Calls())
	}
	if c := h.status(t, "web").FindCondition(api.ConditionReplicaFailure); c != nil {
		t.Errorf("ReplicaFailure still set: %+v", c)
	}
}

// A missing image is pulled once for every slot that needs it, and the
// slots are reported pulling, with the image, meanwhile.
func TestSlotsWaitingForAPullAreReportedPulling(t *testing.T) {
	h := newHarness(t, Options{})
	h.setSpec(newController("web", 2))
	var pulled atomic.Bool
	gate := make(chan struct{})
	h.fake.ImageErr = func(image string) error {
		if !pulled.Load() {
			return fmt.Errorf("%w: %s", taskcontrol.ErrImageNotFound, image)
		}
		return nil
	}
	h.fake.PullErr = func(ctx context.Context, _ string) error {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		pulled.Store(true)
		return nil
	}
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	r := h.report(t, "web")
	if r == nil || len(r.Pulling) != 2 || r.Pulling[0].Image != "demo-task:latest" || r.Pulling[0].Since.IsZero() {
		t.Fatalf("report %+v, want 2 slots pulling demo-task:latest", r)
	}
	close(gate)
	h.idlePulls(t)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if n, pulls := h.fake.Len(), h.fake.Pulls(); n != 2 || len(pulls) != 1 {
		t.Errorf("%d containers and pulls %v, want 2 and one pull", n, pulls)
	}
	if r := h.report(t, "web"); r == nil || len(r.Pulling) != 0 {
		t.Errorf("report %+v, want no slot pulling", r)
	}
}

// idlePulls waits until the node has no pull under way.
func (h *harness) idlePulls(t *testing.T) {
	t.Helper()
	testpoll.Eventually(t, 5*time.Second, func() error {
		h.rm.pulls.mu.Lock()
		defer h.rm.pulls.mu.Unlock()
		for image, ip := range h.rm.pulls.images {
			if ip.running {
				return fmt.Errorf("%s still pulling", image)
			}
		}
		return nil
	})
}

// report returns the node's report on controller id, nil when none.
func (h *harness) report(t *testing.T, id string) *api.NodeReport {
	t.Helper()
	reports, err := h.store.ListReports(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reports {
		if reports[i].Node == harnessNode {
			return &reports[i]
		}
	}
	return nil
}
