package registry

// This file holds the pure functions that decide which slots new replicas
// take and which replicas go first on scale-down. They do no I/O.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/replication-manager/replication-manager/api"
)

// noSlot ranks a container without a valid slot label above every real
// slot, so that it is the first to go on scale-down.
const noSlot = math.MaxInt

// taskName is the contract's container name of a replica: <id>-<slot>.
func taskName(id string, slot int) string {
	return fmt.Sprintf("%s-%d", id, slot)
}

// slotOf reads a container's slot label; noSlot when it is missing or bad.
func slotOf(t api.Task) int {
	n, err := strconv.Atoi(t.Labels[api.LabelSlot])
	if err != nil || n < 1 {
		return noSlot
	}
	return n
}

// freeSlots returns up to n of the lowest slots in 1..limit that are
// neither taken nor blocked. A slot whose name a container outside the set
// holds (blocked) is skipped and moves the limit up by one, so that such a
// container costs the controller a slot name, not a replica. A taken slot
// does not: it may be held by a container on its way out, and creating
// above the limit instead would leave the slots outside 1..replicas. So
// freeSlots may return fewer than n.
func freeSlots(taken map[int]bool, blocked map[int]string, n, limit int) []int {
	out := make([]int, 0, n)
	for slot := 1; len(out) < n && slot <= limit; slot++ {
		if _, ok := blocked[slot]; ok {
			limit++
			continue
		}
		if !taken[slot] {
			out = append(out, slot)
		}
	}
	return out
}

// rankForDeletion orders tasks so that the first ones are the best to delete
// on scale-down, and returns a sorted copy:
//
//  1. a task that is not running goes before a running one;
//  2. then a task that is not ready (unhealthy, or its health check still
//     starting) before a ready one;
//  3. then a task of an older template (its hash is not current) before
//     one of the current template, so that a scale-down during a rollout
//     removes outdated containers first;
//  4. then the higher slot before the lower one (a task without a valid
//     slot counts as the highest), so that the slots left stay 1..replicas;
//  5. then the newer task before the older one, and finally by name, so the
//     order never depends on the order the runtime listed them in.
func rankForDeletion(tasks []api.Task, current string) []api.Task {
	type ranked struct {
		task                     api.Task
		running, ready, outdated bool
		slot                     int
	}
	// sort small keys, not the tasks themselves: a task is a large struct
	rs := make([]*ranked, len(tasks))
	for i, t := range tasks {
		rs[i] = &ranked{task: t, running: t.State == api.StateRunning, ready: t.Ready(),
			outdated: t.Labels[api.LabelTemplateHash] != current, slot: slotOf(t)}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.running != b.running {
			return !a.running
		}
		if a.ready != b.ready {
			return !a.ready
		}
		if a.outdated != b.outdated {
			return a.outdated
		}
		if a.slot != b.slot {
			return a.slot > b.slot
		}
		if !a.task.Created.Equal(b.task.Created) {
			return a.task.Created.After(b.task.Created)
		}
		return a.task.Name < b.task.Name
	})
	out := make([]api.Task, len(rs))
	for i, r := range rs {
		out[i] = r.task
	}
	return out
}

// deadName is the name a dead container is kept under, out of its slot.
func deadName(id, containerID string) string {
	return fmt.Sprintf("%s-dead-%s", id, shortID(containerID))
}

// shortID is a container id as docker ps shows it.
func shortID(containerID string) string {
	if len(containerID) > 12 {
		return containerID[:12]
	}
	return containerID
}

// outdatedName is the name an outdated container is renamed to when its
// successor is started first (a surge): its slot's name goes to the
// successor while it still runs.
func outdatedName(id string, slot int, containerID string) string {
	return fmt.Sprintf("%s-%d-old-%s", id, slot, shortID(containerID))
}

// holdsSlot reports whether a container still has its slot's name.
func holdsSlot(id string, t api.Task) bool {
	slot := slotOf(t)
	if slot == noSlot {
		return false
	}
	// t.Name == taskName(id, slot), without building the name: it is asked
	// of every container in every sync
	rest, ok := strings.CutPrefix(t.Name, id)
	return ok && len(rest) > 1 && rest[0] == '-' && rest[1:] == strconv.Itoa(slot)
}

// newerDeath orders dead containers newest first: by when they stopped,
// then by when they were created.
func newerDeath(a, b api.Task) bool {
	if !a.FinishedAt.Equal(b.FinishedAt) {
		return a.FinishedAt.After(b.FinishedAt)
	}
	return a.Created.After(b.Created)
}
