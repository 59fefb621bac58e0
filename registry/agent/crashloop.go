package agent

// This file tells a crash loop from a container that simply stopped: a
// container that dies on its own (no kill before its death: docker kill,
// stop and rm -f are someone's doing) less than crashMinRun after it
// started is a crash (of a task of several containers: its first or one
// of its parts, taskgroup.go), and every crash doubles the delay before the
// slot's next create, from 100ms up to a minute, as Docker's own restart
// policy does. Ten seconds of running clears it. The backoff is the
// slot's: a slot that crash loops does not hold back the replacement of
// another. Everything here is pure: a crashHistory is a value, crashLoops
// a controller's by slot, and each function returns the next one.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/replication-manager/replication-manager/api"
)

const (
	crashMinRun       = 10 * time.Second
	crashBackoffStart = 100 * time.Millisecond
	crashBackoffMax   = time.Minute
)

// crashDelays are the delays before the create that follows a crash: 100ms
// doubling to a minute.
func crashDelays() wait.Backoff {
	return wait.Backoff{Duration: crashBackoffStart, Factor: 2, Steps: math.MaxInt, Cap: crashBackoffMax}
}

// crashHistory is a slot's recent crashes.
type crashHistory struct {
	backoff backoff
	// counted holds the dead containers already counted, so that a dead
	// container kept for inspection counts once.
	counted map[string]bool
	last    *crash
}

// crash describes the latest crash of a slot, for its status.
type crash struct {
	name     string
	exitCode int
	ranFor   time.Duration
	at       time.Time
}

// observe counts the dead containers not seen before and returns the next
// history and the new crashes. A container that ran for crashMinRun or
// more clears the history.
func (h crashHistory) observe(dead []api.Task) (crashHistory, []crash) {
	counted := make(map[string]bool, len(dead))
	var crashes []crash
	for _, t := range dead {
		counted[t.ID] = true
		if h.counted[t.ID] || t.FinishedAt.IsZero() || t.StartedAt.IsZero() || t.Killed {
			continue // counted already, never started, or killed by someone: not a crash
		}
		ran := t.FinishedAt.Sub(t.StartedAt)
		if ran >= crashMinRun {
			h.backoff, h.last = backoff{}, nil
			continue
		}
		cr := crash{name: t.Name, exitCode: t.ExitCode, ranFor: ran, at: t.FinishedAt}
		h.backoff = h.backoff.failed(t.FinishedAt, crashDelays)
		h.last = &cr
		crashes = append(crashes, cr)
	}
	h.counted = counted // forget containers that are gone
	return h, crashes
}

// settle clears the history once a container started after the last crash
// has run for crashMinRun. It also returns how long until it could clear
// (0 when there is nothing to clear or it just cleared).
func (h crashHistory) settle(active []api.Task, now time.Time) (crashHistory, time.Duration) {
	if h.last == nil {
		return h, 0
	}
	var next time.Duration
	for _, t := range active {
		started := t.StartedAt
		if started.IsZero() {
			started = t.Created
		}
		if t.State != api.StateRunning || started.Before(h.last.at) {
			continue
		}
		ran := now.Sub(started)
		if ran >= crashMinRun {
			h.backoff, h.last = backoff{}, nil
			return h, 0
		}
		if wait := crashMinRun - ran; next == 0 || wait < next {
			next = wait
		}
	}
	return h, next
}

// condition returns the CrashLoop condition, or nil when not crash looping.
func (h crashHistory) condition(now time.Time) *api.Condition {
	if h.last == nil {
		return nil
	}
	return &api.Condition{
		Type:   api.ConditionCrashLoop,
		Reason: "BackOff",
		Message: fmt.Sprintf("container %s exited with code %d after %s; %d crashes in a row; next start in %s",
			h.last.name, h.last.exitCode, h.last.ranFor.Round(time.Millisecond), h.backoff.failures,
			h.backoff.wait(now).Round(time.Millisecond)),
	}
}

// looping reports whether the slot crashed and has not run long enough
// since to clear it.
func (h crashHistory) looping() bool { return h.last != nil || h.backoff.failures > 0 }

// crashLoops are a controller's crash histories on the node, by slot;
// a slot with nothing to remember has none.
type crashLoops map[int]crashHistory

// observe counts each slot's dead containers not seen before (observe of
// crashHistory) and returns the next histories and the new crashes, by
// slot. A slot with no dead container left forgets those it counted.
func (l crashLoops) observe(dead []api.Task) (crashLoops, []crash) {
	bySlot := map[int][]api.Task{}
	for _, t := range dead {
		bySlot[slotOf(t)] = append(bySlot[slotOf(t)], t)
	}
	for slot := range l {
		if _, ok := bySlot[slot]; !ok {
			bySlot[slot] = nil // no dead container left: it forgets what it counted
		}
	}
	next := crashLoops{}
	var crashes []crash
	for _, slot := range slices.Sorted(maps.Keys(bySlot)) {
		h, found := l[slot].observe(bySlot[slot])
		crashes = append(crashes, found...)
		if h.looping() || len(h.counted) > 0 {
			next[slot] = h
		}
	}
	return next, crashes
}

// settle clears each slot's history once a container of the slot started
// after its last crash has run for crashMinRun (settle of crashHistory),
// and returns how long until the next one could clear. Every sync calls
// it: with no history it costs nothing.
func (l crashLoops) settle(active []api.Task, now time.Time) (crashLoops, time.Duration) {
	if len(l) == 0 {
		return l, 0
	}
	next := make(crashLoops, len(l))
	var soonest time.Duration
	for slot, h := range l {
		h, in := h.settle(slices.DeleteFunc(slices.Clone(active), func(t api.Task) bool { return slotOf(t) != slot }), now)
		if h.looping() || len(h.counted) > 0 {
			next[slot] = h
		}
		if in > 0 && (soonest == 0 || in < soonest) {
			soonest = in
		}
	}
	return next, soonest
}

// wait is how long slot's next create must still wait; 0 means go.
func (l crashLoops) wait(slot int, now time.Time) time.Duration {
	return l[slot].backoff.wait(now)
}

// calm reports whether no slot crash loops.
func (l crashLoops) calm() bool {
	for _, h := range l {
		if h.looping() {
			return false
		}
	}
	return true
}

// condition is the CrashLoop condition of the slot that crashed last, or
// nil when none crash loops.
func (l crashLoops) condition(now time.Time) *api.Condition { return l.latest().condition(now) }

// latest is the history of the slot that crashed last (the lowest of
// those that crashed at once); one with no last crash when none did.
func (l crashLoops) latest() crashHistory {
	latest, latestSlot := crashHistory{}, 0
	for slot, h := range l {
		if h.last == nil {
			continue
		}
		if latest.last == nil || h.last.at.After(latest.last.at) || h.last.at.Equal(latest.last.at) && slot < latestSlot {
			latest, latestSlot = h, slot
		}
	}
	return latest
}
