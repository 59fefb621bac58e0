package api

// This file holds the helpers of a status's conditions and its comparison.

import (
	"reflect"
	"slices"
	"time"
)

// SetCondition sets a condition (its Status "True" unless it says
// otherwise), keeping its transition time when its status did not change.
// It returns a new slice.
func SetCondition(conds []Condition, c Condition, now time.Time) []Condition {
	out := make([]Condition, 0, len(conds)+1)
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

// ClearCondition removes the condition of the given type: its cause is
// gone. Without one, it returns conds itself (conditions are replaced,
// never changed in place, and a status that changes nothing is the common
// case of a sync).
func ClearCondition(conds []Condition, condType string) []Condition {
	if !slices.ContainsFunc(conds, func(c Condition) bool { return c.Type == condType }) {
		return conds
	}
	out := make([]Condition, 0, len(conds))
	for _, c := range conds {
		if c.Type != condType {
			out = append(out, c)
		}
	}
	return out
}

// SameStatus compares two statuses, ignoring when they were written.
func SameStatus(a, b ReplicationControllerStatus) bool {
	a.LastSyncTime, b.LastSyncTime = time.Time{}, time.Time{}
	if len(a.Conditions) == 0 {
		a.Conditions = nil
	}
	if len(b.Conditions) == 0 {
		b.Conditions = nil
	}
	return reflect.DeepEqual(a, b)
}
