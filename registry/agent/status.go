package agent

// This file holds the pure helpers of a controller's status (counts and
// conditions) and decides when to write it; writing goes through the Store.

import (
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// countReplicas returns how many tasks are ready and how many have been
// ready for minReady (all of them with minReady 0, as available says), and, when some ready task is not available yet, how
// long until the next one becomes available (0 when none is waiting).
func countReplicas(tasks []api.Task, minReady time.Duration, now time.Time) (ready, available int, next time.Duration) {
	for _, t := range tasks {
		if !t.Ready() {
			continue
		}
		ready++
		wait := minReady - now.Sub(startedAt(t))
		if minReady <= 0 || wait <= 0 {
			available++
			continue
		}
		if next == 0 || wait < next {
			next = wait
		}
	}
	return ready, available, next
}
