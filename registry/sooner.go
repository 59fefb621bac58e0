package registry

import "time"

// Sooner is the sooner of two waits before something is looked at again,
// where 0 (or less) means no wait is due: the leader's, the nodes' and
// the node model's passes each keep the soonest of their reasons to
// look again.
func Sooner(cur, after time.Duration) time.Duration {
	if after > 0 && (cur <= 0 || after < cur) {
		return after
	}
	return cur
}
