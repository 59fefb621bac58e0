package agent_test

// Pulls as a node runs them (the external harness): an image that cannot be
// pulled costs few calls, and the slots waiting for a pull are reported.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// The engine lacks the image and the registry refuses: the controller's
// first minute costs the engine at most 10 calls (image checks, pulls and
// creates), however often it is synced, and its status names the
// engine's reason; once the registry lets the pull through, every
// replica starts after one more pull.
func TestUnpullableImageCostsAtMost10CallsInAMinute(t *testing.T) {
	h := newHarness(t, roles.Options{})
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
	h.clock.Advance(agent.PullMaxDelay)
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
	h := newHarness(t, roles.Options{})
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
		if image, ok := h.rm.Pulling(); ok {
			return fmt.Errorf("%s still pulling", image)
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
