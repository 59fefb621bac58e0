package agent_test

// Tests of the machinery that keeps the manager safe under failure:
// backoffs, crash loops, in-flight tracking, readiness and events.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestMissingImageCostsNoCreateCall(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := newController("web", 100)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = api.PullNever // never pulled
	h.setSpec(rc)
	var missing atomic.Bool
	missing.Store(true)
	h.fake.ImageErr = func(image string) error {
		if missing.Load() {
			return fmt.Errorf("%w: %s", taskcontrol.ErrImageNotFound, image)
		}
		return nil
	}

	// a sync every 100ms for a minute: far more often than any real
	// trigger, so that only the backoff limits the calls
	for range 600 {
		_ = h.sync(t, "web")
		h.clock.Advance(100 * time.Millisecond)
	}
	if c := h.fake.Counts(); c.Create != 0 || c.Image > 10 {
		t.Errorf("%d create and %d image calls in a minute for a missing image, want 0 and at most 10", c.Create, c.Image)
	}
	c := h.status(t, "web").FindCondition(api.ConditionReplicaFailure)
	if c == nil || c.Message != "node a: create web-1: no such image: demo-task:latest (imagePullPolicy Never)" {
		t.Fatalf("ReplicaFailure = %+v, want the missing image named", c)
	}

	// the image appears: the next attempt creates every replica and the
	// backoff resets
	missing.Store(false)
	h.clock.Advance(agent.CreateBackoffMax)
	for range 5 {
		if err := h.sync(t, "web"); err != nil {
			t.Fatalf("sync after the image appeared: %v", err)
		}
	}
	if got := h.fake.Len(); got != 100 {
		t.Errorf("%d containers, want 100", got)
	}
	if s := h.rm.CreateFailures("web"); s != 0 {
		t.Errorf("create backoff failures = %d after success, want 0", s)
	}
	if c := h.status(t, "web").FindCondition(api.ConditionReplicaFailure); c != nil {
		t.Errorf("ReplicaFailure still set after success: %+v", c)
	}
}

func TestFailingCreatesCostOneBurstThenAHandfulPerMinute(t *testing.T) {
	h := newHarness(t, roles.Options{BurstReplicas: 20})
	h.setSpec(newController("web", 100))
	h.fake.CreateErr = func(api.TaskSpec) error { return errors.New("invalid reference format") }

	for range 600 {
		_ = h.sync(t, "web")
		h.clock.Advance(100 * time.Millisecond)
	}
	// the first batch is the burst (the image exists, nothing failed yet);
	// after it, one probe per backoff step
	if got := len(h.fake.Creates()); got > 20+10 {
		t.Errorf("%d create calls in a minute of failing creates, want at most one burst (20) and 10 more", got)
	}
}

// crashAll makes every running container of the fake exit with code after
// running for ran.
func crashAll(h *harness, ran time.Duration, code int) {
	h.clock.Advance(ran)
	for _, task := range h.fake.Tasks() {
		if task.State == api.StateRunning {
			h.fake.SetState(task.ID, api.StateExited, code)
		}
	}
}

func TestCrashLoopBacksOffAndSaysWhy(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 5))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}

	// every container dies a second after it starts, for a minute
	for range 600 {
		crashAll(h, 100*time.Millisecond, 3)
		_ = h.sync(t, "web")
	}
	// each slot: its first create, then one after each crash, 100 ms
	// doubling: 10 in a minute
	perSlot := map[string]int{}
	for _, name := range h.fake.Creates() {
		perSlot[name]++
	}
	for name, n := range perSlot {
		if n > 11 {
			t.Errorf("%d creates of %s in a minute of crash loop, want its backoff's handful (<= 11)", n, name)
		}
	}
	t.Logf("creates in a minute of crash loop with 5 replicas: %v", perSlot)
	c := h.status(t, "web").FindCondition(api.ConditionCrashLoop)
	if c == nil || !strings.Contains(c.Message, "exited with code 3") {
		t.Fatalf("CrashLoop condition = %+v, want one naming exit code 3", c)
	}
	var dead int
	for _, task := range h.fake.Tasks() {
		if !task.Active() {
			dead++
		}
	}
	if dead > 1 {
		t.Errorf("%d dead containers kept, want at most 1", dead)
	}
}

func TestACrashLoopingSlotDoesNotHoldBackAnotherSlotsReplacement(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	web1 := func() *api.Task {
		for _, task := range h.fake.Tasks() {
			if task.Name == "web-1" && task.Active() {
				return &task
			}
		}
		return nil
	}
	// web-1 crashes four times in a row: its next start waits 1.6 s
	for range 4 {
		h.clock.Advance(agent.CrashMinRun / 10)
		h.fake.SetState(web1().ID, api.StateExited, 3)
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(h.rm.CrashWait("web", 1))
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Advance(agent.CrashMinRun / 10)
	h.fake.SetState(web1().ID, api.StateExited, 3)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if wait := h.rm.CrashWait("web", 1); wait < time.Second {
		t.Fatalf("web-1 waits %s after five crashes, want its backoff of 1.6s", wait)
	}

	// someone removes web-2: it is replaced at once, whatever web-1 waits
	for _, task := range h.fake.Tasks() {
		if task.Name == "web-2" {
			if err := h.fake.DeleteTask(t.Context(), task.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := len(h.fake.Creates())
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Creates()[before:]; !slices.Equal(got, []string{"web-2"}) {
		t.Errorf("creates at once after web-2 was removed: %q, want web-2 alone (web-1 waits out its crash backoff)", got)
	}
}

func TestCrashLoopClearsAfterTenSecondsOfRunning(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	crashAll(h, time.Second, 1)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if h.status(t, "web").FindCondition(api.ConditionCrashLoop) == nil {
		t.Fatal("no CrashLoop condition after a crash")
	}
	h.clock.Advance(agent.CrashBackoffStart)
	if err := h.sync(t, "web"); err != nil { // the replacement starts
		t.Fatal(err)
	}
	h.clock.Advance(agent.CrashMinRun)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if c := h.status(t, "web").FindCondition(api.ConditionCrashLoop); c != nil {
		t.Errorf("CrashLoop still set after 10s of running: %+v", c)
	}
	if s := h.rm.CrashFailures("web", 1); s != 0 {
		t.Errorf("crash backoff failures = %d, want 0", s)
	}
}

// laggingTasks serves lists that are as old as when they started: onList
// runs between taking the snapshot and returning it.
type laggingTasks struct {
	*taskcontrol.Fake
	onList func()
}

func (l *laggingTasks) ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error) {
	tasks, err := l.Fake.ListTasks(ctx, selector)
	if l.onList != nil {
		hook := l.onList
		l.onList = nil
		hook()
	}
	return tasks, err
}

func TestInFlightCreatesAreNotRepeatedWhenTheListLags(t *testing.T) {
	lag := &laggingTasks{}
	h := newHarness(t, roles.Options{TaskControl: lag})
	lag.Fake = h.fake
	ctx := t.Context()
	h.setSpec(newController("web", 3))
	if err := h.rm.RelistTasks(ctx); err != nil {
		t.Fatal(err)
	}

	// a list starts, a sync creates 3 containers, then the stale list (0
	// containers) lands in the cache
	lag.onList = func() {
		if err := h.step(ctx, "web"); err != nil {
			t.Errorf("sync during the list: %v", err)
		}
	}
	if err := h.rm.RelistTasks(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	validateSyncReplication(t, h.fake, 3, 0)
}

func TestDeletedContainersAreNotDeletedTwiceWhenTheListLags(t *testing.T) {
	lag := &laggingTasks{}
	h := newHarness(t, roles.Options{TaskControl: lag})
	lag.Fake = h.fake
	ctx := t.Context()
	h.setSpec(newController("web", 5))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.fake.Reset()

	h.setSpec(newController("web", 3))
	lag.onList = func() {
		if err := h.step(ctx, "web"); err != nil {
			t.Errorf("sync during the list: %v", err)
		}
	}
	if err := h.rm.RelistTasks(ctx); err != nil { // stale: still 5
		t.Fatal(err)
	}
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	validateSyncReplication(t, h.fake, 0, 2)
	if n := h.fake.Len(); n != 3 {
		t.Errorf("%d containers, want 3", n)
	}
}

func TestReadinessFollowsHealthAndMinReadySeconds(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := newController("web", 2)
	rc.DesiredState.MinReadySeconds = 30
	h.setSpec(rc)
	id1 := h.addTask(t, "web", 1, api.StateRunning)
	id2 := h.addTask(t, "web", 2, api.StateRunning)
	h.fake.SetHealth(id1, api.HealthStarting)
	h.fake.SetHealth(id2, api.HealthHealthy)

	check := func(ready, available int) {
		t.Helper()
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
		st := h.status(t, "web")
		if st.Replicas != 2 || st.ReadyReplicas != ready || st.AvailableReplicas != available {
			t.Errorf("replicas/ready/available = %d/%d/%d, want 2/%d/%d", st.Replicas, st.ReadyReplicas, st.AvailableReplicas, ready, available)
		}
	}
	check(1, 0) // one healthy, but not for 30s yet
	h.clock.Advance(31 * time.Second)
	check(1, 1)
	h.fake.SetHealth(id1, api.HealthHealthy)
	check(2, 2)
	h.fake.SetHealth(id2, api.HealthUnhealthy)
	check(1, 1)
}

func TestSyncRecordsEventsInEtcd(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.fake.CreateErr = func(api.TaskSpec) error { return errors.New("daemon refused") }
	h.setSpec(newController("web", 3))
	_ = h.sync(t, "web")

	var events []api.Event
	testpoll.Until(t, waitTimeout, "two events written", func() bool { // written off the sync's path
		var err error
		events, err = h.store.ListEvents(t.Context(), "web")
		if err != nil {
			t.Fatal(err)
		}
		return len(events) >= 2
	})
	var reasons []string
	for _, ev := range events {
		reasons = append(reasons, ev.Reason)
	}
	if want := []string{"Created", "FailedCreate"}; !slices.Equal(reasons, want) {
		t.Fatalf("event reasons = %v, want %v", reasons, want)
	}
	if !strings.Contains(events[0].Message, "web-1, web-2") || !strings.Contains(events[1].Message, "daemon refused") {
		t.Errorf("event messages = %q, %q", events[0].Message, events[1].Message)
	}
}

func TestDeadContainerIsReplacedFromItsEventWithoutResync(t *testing.T) {
	h := newHarness(t, roles.Options{SyncPeriod: time.Hour, Clock: wallClock{}}) // no resync in this test
	h.fake.Now = time.Now
	h.run(t)
	h.create(t, newController("web", 2))
	h.waitForNames(t, "web-1", "web-2")

	var victim string
	for _, task := range h.fake.Tasks() {
		if task.Name == "web-1" {
			victim = task.ID
		}
	}
	h.fake.SetState(victim, api.StateExited, 137)
	testpoll.Until(t, waitTimeout, "web-1 replaced", func() bool {
		for _, task := range h.fake.Tasks() {
			if task.Name == "web-1" && task.ID != victim && task.State == api.StateRunning {
				return true
			}
		}
		return false
	})
}

func TestCreatedButNotStartedContainerHoldsItsSlotUntilAbandoned(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	// another manager is between its create and its start
	pendingID := h.addTask(t, "web", 1, api.StateCreated)

	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	validateSyncReplication(t, h.fake, 0, 0)

	// still not started long after: abandoned, so replaced
	h.clock.Advance(agent.PendingGrace + time.Second)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Creates(); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("creates = %v, want [web-1] in the abandoned container's slot", got)
	}
	// it never ran, so there is nothing to keep it for
	if got := h.fake.Deletes(); !slices.Equal(got, []string{pendingID}) {
		t.Errorf("deletes = %v, want the abandoned container removed", got)
	}
	if n := h.fake.Len(); n != 1 {
		t.Errorf("%d containers, want only the new web-1", n)
	}
}

func TestAPanickingSyncIsRecoveredAndRetried(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	if err := h.rm.RelistTasks(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.fake.CreateErr = func(api.TaskSpec) error { panic("boom") }

	h.assign(t, "web")
	err := h.rm.SyncRecovering(t.Context(), "web")
	if err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Fatalf("syncRecovering = %v, want the panic as an error", err)
	}
	h.fake.CreateErr = nil
	if err := h.rm.SyncRecovering(t.Context(), "web"); err != nil {
		t.Errorf("the sync after a panic = %v, want it to work", err)
	}
}

func TestContainerBeingRemovedByDockerIsLeftAloneButHoldsItsSlot(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	removing := h.addTask(t, "web", 1, api.StateRemoving)

	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	// web-1's name is still taken, and web-3 would be outside 1..replicas
	if got := h.fake.Creates(); !slices.Equal(got, []string{"web-2"}) {
		t.Errorf("creates = %v, want [web-2]", got)
	}
	if c := h.fake.Counts(); c.Delete+c.Rename != 0 {
		t.Errorf("calls %+v, want no delete or rename of a container Docker is removing", c)
	}

	// Docker finishes the removal: slot 1 is filled
	if err := h.fake.DeleteTask(t.Context(), removing); err != nil {
		t.Fatal(err)
	}
	h.fake.Reset()
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Creates(); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("creates after the removal = %v, want [web-1]", got)
	}
}

func TestProvenTemplateSkipsSlowStartUntilItFails(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil { // proves the template
		t.Fatal(err)
	}
	var failing atomic.Bool
	var inFlight, most atomic.Int64
	allIn, once := make(chan struct{}), sync.Once{}
	h.fake.CreateErr = func(spec api.TaskSpec) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if failing.Load() {
			return errors.New("daemon refused")
		}
		// hold each create until the batch's 8 are all in flight, or
		// until it is clear they never will be: a sleep let a loaded
		// machine run them one after another
		if n == 8 {
			once.Do(func() { close(allIn) })
		}
		select {
		case <-allIn:
		case <-time.After(5 * time.Second):
		}
		return nil
	}

	h.setSpec(newController("web", 9))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := most.Load(); got != 8 {
		t.Errorf("at most %d creates at once for a proven template, want all 8 in one batch", got)
	}

	// a failure makes it unproven: the next attempt probes with one
	failing.Store(true)
	h.setSpec(newController("web", 20))
	_ = h.sync(t, "web") // 11 at once, all fail
	h.fake.Reset()
	h.clock.Advance(agent.CreateBackoffMax)
	_ = h.sync(t, "web")
	if got := len(h.fake.Creates()); got != 1 {
		t.Errorf("%d creates after a failure, want 1: slow start again", got)
	}
}
