package agent

// This file holds the pure helpers of a controller's status (counts and
// conditions) and decides when to write it; writing goes through the Store.

import (
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// countReplicas returns how many tasks are ready and how many of those are
// available (ready for minReady), and, when some ready task is not
// available yet, how long until the next one becomes available (0 when
// none is waiting).
func countReplicas(tasks []api.Task, minReady time.Duration, now time.Time) (ready, avail int, next time.Duration) {
	for _, t := range tasks {
		if !t.Ready() {
			continue
		}
		ready++
		if available(t, minReady, now) {
			avail++
			continue
		}
		if wait := minReady - now.Sub(startedAt(t)); next == 0 || wait < next {
			next = wait
		}
	}
	return ready, avail, next
}
