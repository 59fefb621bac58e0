package registry

// This file holds the pure helpers of a controller's status (counts and
// conditions) and decides when to write it; writing goes through the Store.

import (
	"reflect"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// countReplicas returns how many tasks are ready and how many have been
// ready for minReady, and, when some ready task is not available yet, how
// long until the next one becomes available (0 when none is waiting).
func countReplicas(tasks []api.Task, minReady time.Duration, now time.Time) (ready, available int, next time.Duration) {
	for _, t := range tasks {
		if !t.Ready() {
			continue
		}
		ready++
		since := t.StartedAt
		if since.IsZero() {
			since = t.Created
		}
		wait := minReady - now.Sub(since)
		if wait <= 0 {
			available++
			continue
		}
		if next == 0 || wait < next {
			next = wait
		}
	}
	return ready, available, next
}

// setCondition sets a condition (its Status "True" unless it says
// otherwise), keeping its transition time when its status did not change.
// It returns a new slice.
func setCondition(conds []api.Condition, c api.Condition, now time.Time) []api.Condition {
	out := make([]api.Condition, 0, len(conds)+1)
	if c.Status == "" {
		c.Status = "True"
	}
	c.LastTransitionTime = now
	for _, old := range conds {
		if old.Type != c.Type {
			out = append(out, old)
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
	}
	return append(out, c)
}

// clearCondition removes the condition of the given type: its cause is gone.
func clearCondition(conds []api.Condition, condType string) []api.Condition {
	out := make([]api.Condition, 0, len(conds))
	for _, c := range conds {
		if c.Type != condType {
			out = append(out, c)
		}
	}
	return out
}

// sameStatus compares two statuses, ignoring when they were written.
func sameStatus(a, b api.ReplicationControllerStatus) bool {
	a.LastSyncTime, b.LastSyncTime = time.Time{}, time.Time{}
	if len(a.Conditions) == 0 {
		a.Conditions = nil
	}
	if len(b.Conditions) == 0 {
		b.Conditions = nil
	}
	return reflect.DeepEqual(a, b)
}
