package registry

// This file tells a crash loop from a container that simply stopped: a
// container that dies less than crashMinRun after it started is a crash,
// and every crash doubles the delay before the controller's next create,
// from 100ms up to a minute, as Docker's own restart policy does. Ten
// seconds of running clears it.

import (
	"fmt"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

const (
	crashMinRun       = 10 * time.Second
	crashBackoffStart = 100 * time.Millisecond
	crashBackoffMax   = time.Minute
)

// crashTracker counts each controller's crashes.
type crashTracker struct {
	backoff *stepBackoff

	mu sync.Mutex
	// counted holds, per controller, the dead containers already counted,
	// so that a dead container kept for inspection counts once.
	counted map[string]map[string]bool
	last    map[string]crash
}

// crash describes the latest crash of a controller, for its status.
type crash struct {
	name     string
	exitCode int
	ranFor   time.Duration
	at       time.Time
}

func newCrashTracker() *crashTracker {
	return &crashTracker{
		backoff: newStepBackoff(crashBackoffStart, crashBackoffMax),
		counted: make(map[string]map[string]bool),
		last:    make(map[string]crash),
	}
}

// observe counts the dead containers not seen before and returns the new
// crashes. A container that ran for crashMinRun or more clears the count.
func (c *crashTracker) observe(id string, dead []api.Task) []crash {
	c.mu.Lock()
	defer c.mu.Unlock()
	counted := make(map[string]bool, len(dead))
	var crashes []crash
	for _, t := range dead {
		counted[t.ID] = true
		if c.counted[id][t.ID] || t.FinishedAt.IsZero() || t.StartedAt.IsZero() {
			continue // counted already, or never started: not a crash
		}
		ran := t.FinishedAt.Sub(t.StartedAt)
		if ran >= crashMinRun {
			c.backoff.reset(id)
			delete(c.last, id)
			continue
		}
		cr := crash{name: t.Name, exitCode: t.ExitCode, ranFor: ran, at: t.FinishedAt}
		c.backoff.fail(id, t.FinishedAt)
		c.last[id] = cr
		crashes = append(crashes, cr)
	}
	c.counted[id] = counted // forget containers that are gone
	return crashes
}

// settle clears the crash loop once a container started after the last
// crash has run for crashMinRun. It returns how long until it could clear
// (0 when there is nothing to clear or it just cleared).
func (c *crashTracker) settle(id string, active []api.Task, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, ok := c.last[id]
	if !ok {
		return 0
	}
	var next time.Duration
	for _, t := range active {
		started := t.StartedAt
		if started.IsZero() {
			started = t.Created
		}
		if t.State != api.StateRunning || started.Before(last.at) {
			continue
		}
		ran := now.Sub(started)
		if ran >= crashMinRun {
			c.backoff.reset(id)
			delete(c.last, id)
			return 0
		}
		if wait := crashMinRun - ran; next == 0 || wait < next {
			next = wait
		}
	}
	return next
}

// condition returns the CrashLoop condition of id, or nil when it is not
// crash looping.
func (c *crashTracker) condition(id string, now time.Time) *api.Condition {
	c.mu.Lock()
	last, ok := c.last[id]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return &api.Condition{
		Type:   api.ConditionCrashLoop,
		Reason: "BackOff",
		Message: fmt.Sprintf("container %s exited with code %d after %s; %d crashes in a row; next start in %s",
			last.name, last.exitCode, last.ranFor.Round(time.Millisecond), c.backoff.steps(id),
			c.backoff.wait(id, now).Round(time.Millisecond)),
	}
}

// forget drops what is known of a deleted controller.
func (c *crashTracker) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.counted, id)
	delete(c.last, id)
	c.backoff.reset(id)
}
