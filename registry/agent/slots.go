package agent

// This file holds the pure helpers of slot names: a container's slot, the
// names a slot's containers take, and the order of dead ones. They do no
// I/O. Which slots exist and which go first on a scale-down is the
// leader's (package decide).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/replication-manager/replication-manager/api"
)

// noSlot ranks a container without a valid slot label above every real
// slot, so that it is the first to go on scale-down.
const noSlot = math.MaxInt

// slotOf reads a container's slot label; noSlot when it is missing or bad.
func slotOf(t api.Task) int {
	n, err := strconv.Atoi(t.Labels[api.LabelSlot])
	if err != nil || n < 1 {
		return noSlot
	}
	return n
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
