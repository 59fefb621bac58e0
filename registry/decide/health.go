package decide

// This file replaces unhealthy tasks, for a controller whose health check
// says onUnhealthy: replace. A node reports a slot's task unhealthy; the
// decision tells that node to replace it by naming the container in the
// slot's assignment (Assignment.Replace), and the node replaces the whole
// task, stop first. It does not replace a slot the rollout is about to
// give another template (that replaces it anyway), nor one on a node that
// is gone.
//
// Two guards keep this from a restart storm when a dependency every
// replica shares goes down:
//
//   - at most max(1, maxUnavailable) slots go without a running container
//     at once: a replacement is made only while fewer slots than that have
//     nothing running that stays (a replacement in flight, a stop-first
//     rollout step in flight, a slot not placed or not started yet);
//   - a slot replaced for ill health that turns unhealthy again waits
//     before its next replacement, from when the decision first saw it
//     unhealthy: 10 s, doubling up to 5 min. A slot seen unhealthy long
//     after its last replacement (healthReset) starts over.
//
// The record of that (Health) is the leader's, kept between decisions; a
// new leader starts with none, so each slot may be replaced once at once
// after a leader change, within the first guard.

import (
	"maps"
	"slices"
	"time"
)

// Health is the leader's record of one slot's ill health.
type Health struct {
	// Replaced counts the slot's replacements for ill health in a row,
	// and At is when the last one was ordered.
	Replaced int
	At       time.Time
	// Sick is the id of the container last seen unhealthy in the slot,
	// and Since when a decision first saw it so.
	Sick  string
	Since time.Time
}

// Replacement is a slot whose task this decision has replaced for ill
// health: Container on Node.
type Replacement struct {
	Slot      int
	Node      string
	Container string
}

// The backoff between replacements of one slot for ill health.
const (
	healthBackoffFirst = 10 * time.Second
	healthBackoffMax   = 5 * time.Minute
	// healthReset: a slot that turns unhealthy this long after its last
	// replacement starts its backoff over.
	healthReset = 2 * healthBackoffMax
)

// HealthBackoff is how long a slot replaced n times in a row for ill
// health waits, once unhealthy again, before its next replacement.
func HealthBackoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := healthBackoffFirst
	for i := 1; i < n && d < healthBackoffMax; i++ {
		d *= 2
	}
	return min(d, healthBackoffMax)
}

// replaceUnhealthy orders the replacements that are due, within the
// bound, and leaves the record in the result.
func (d *decision) replaceUnhealthy() {
	if !d.c.ReplaceUnhealthy {
		return
	}
	health := make(map[int]Health, len(d.in.Health))
	for slot, h := range d.in.Health {
		if d.assignedNow(slot) {
			health[slot] = h
		}
	}
	d.r.Health = health
	room := max(1, d.c.Unavailable) - d.down()
	for _, slot := range slices.Sorted(maps.Keys(d.next)) {
		ct, ok := d.unhealthy(slot)
		if !ok {
			continue
		}
		d.r.Unhealthy = append(d.r.Unhealthy, slot)
		a := d.next[slot]
		h := health[slot]
		if h.Sick != ct.ID {
			h.Sick, h.Since = ct.ID, d.in.Now
		}
		if h.Replaced > 0 && h.Since.Sub(h.At) >= healthReset {
			h.Replaced = 0
		}
		health[slot] = h
		switch {
		case a.Replace == ct.ID:
			continue // ordered already
		case d.rollsOver(slot):
			continue // the rollout replaces it
		case room <= 0:
			continue // once one in flight has a running container again
		}
		if wait := h.Since.Add(HealthBackoff(h.Replaced)).Sub(d.in.Now); wait > 0 {
			d.r.recheck(wait)
			continue
		}
		na := a
		na.Replace = ct.ID
		d.set(slot, &na)
		room--
		h.Replaced++
		h.At = d.in.Now
		health[slot] = h
		d.r.Replaced = append(d.r.Replaced, Replacement{Slot: slot, Node: a.Node, Container: ct.ID})
	}
}

// unhealthy returns the unhealthy live container that holds slot's name
// on its assigned node, if there is one and the node is alive.
func (d *decision) unhealthy(slot int) (Container, bool) {
	a := d.next[slot]
	if !d.alive(a.Node) {
		return Container{}, false
	}
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node && ct.Named && ct.Unhealthy && ct.ID != "" {
			return ct, true
		}
	}
	return Container{}, false
}

// rollsOver reports whether the rollout gives slot another template: it
// is outdated, and the controller rolls (neither paused nor OnDelete).
func (d *decision) rollsOver(slot int) bool {
	a := d.next[slot]
	return !d.c.OnDelete && !d.c.Paused && (a.Hash != d.c.Hash || a.OnDelete)
}

// down counts the slots that have nothing running that stays: an
// assigned slot whose node reports no live container of it that it keeps
// (a replacement or a stop-first step in flight, a container not
// reported yet), and each slot short of replicas (not placed yet, or
// moving).
func (d *decision) down() int {
	n := max(0, d.c.Replicas-len(d.next))
	for slot, a := range d.next {
		if !d.runsKept(slot, a) {
			n++
		}
	}
	return n
}

// runsKept reports whether a's node reports a live container of slot that
// it keeps: not one it is to replace or stop.
func (d *decision) runsKept(slot int, a Assignment) bool {
	for _, ct := range d.live[slot] {
		if ct.Node == a.Node && kept(ct, a) {
			return true
		}
	}
	return false
}

// replacing reports whether slot is being replaced for ill health: a
// replacement is ordered, and no report shows a container its node keeps
// (the successor is not reported yet, or the sick one not stopped yet).
func (d *decision) replacing(slot int, a Assignment) bool {
	return a.Replace != "" && !d.runsKept(slot, a)
}
