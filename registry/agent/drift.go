package agent

// This file describes what a container list found other than the cache had
// it (cache drift): an event Docker dropped, or one the stream lost while
// it was down. The relist logs it once, with a few of the containers that
// differed, and counts it (replication_manager_cache_drift_total), so that
// an operator learns whether the events can be trusted. It does not fix
// the cache; the list does that (taskCache.replace). A change whose event
// was still on its way while the list ran counts too, so a rare count on a
// node whose containers churn is not proof of a lost event; a steady one
// is.

import (
	"fmt"
	"strings"

	"github.com/replication-manager/replication-manager/api"
)

// driftExamples is how many differing containers a drift log names; the
// rest are only counted.
const driftExamples = 5

// listDrift is the difference between a list and the cache it replaced.
type listDrift struct {
	// controllers are the controllers whose containers differed.
	controllers []string
	// containers counts the containers that differed.
	containers int
	// examples describe the first driftExamples of them.
	examples []string
}

// add counts one container that differed; describe says how, and is
// called only for the first few.
func (d *listDrift) add(describe func() string) {
	d.containers++
	if len(d.examples) < driftExamples {
		d.examples = append(d.examples, describe())
	}
}

// String is the log's account of the drift: the containers named, then
// how many more.
func (d *listDrift) String() string {
	s := strings.Join(d.examples, "; ")
	if more := d.containers - len(d.examples); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

// driftListed describes a container the list has and the cache had not.
func driftListed(t api.Task) string {
	return fmt.Sprintf("%s: unknown to the cache, listed %s", t.Name, t.State)
}

// driftGone describes a container the cache had and the list has not.
func driftGone(t api.Task) string {
	return fmt.Sprintf("%s: %s in the cache, gone from the list", t.Name, t.State)
}

// driftChanged describes a container the list sees other than the cache
// did: each field sameTask compares that differs, cache → list.
func driftChanged(cached, listed api.Task) string {
	var diffs []string
	if cached.Name != listed.Name {
		diffs = append(diffs, fmt.Sprintf("name %s → %s", cached.Name, listed.Name))
	}
	if cached.State != listed.State {
		diffs = append(diffs, fmt.Sprintf("state %s → %s", cached.State, listed.State))
	}
	if cached.Health != listed.Health && (cached.Active() || listed.Active()) {
		diffs = append(diffs, fmt.Sprintf("health %q → %q", cached.Health, listed.Health))
	}
	if cached.ImageID != listed.ImageID {
		diffs = append(diffs, fmt.Sprintf("image %s → %s", cached.ImageID, listed.ImageID))
	}
	if a, b := cached.Labels[api.LabelController], listed.Labels[api.LabelController]; a != b {
		diffs = append(diffs, fmt.Sprintf("controller %s → %s", a, b))
	}
	return listed.Name + ": " + strings.Join(diffs, ", ")
}
