package agent

// This file is a container as the cache keeps it. An api.Task is about 240
// bytes, and a Go map keeps a value of more than 128 bytes in an
// allocation of its own: at 100,000 containers, 100,000 small objects,
// each reallocated at every change the cache learned, scattered among the
// convergence's garbage of the same size. A cachedTask is 120 bytes, which
// the map holds in place: the repeated strings as handles to their one
// copy, the times as Unix nanoseconds, and the fields few containers have
// behind a pointer.
//
// Its labels are the other large part: a map of a handful of labels takes
// over 300 bytes, and the containers of one controller and template have
// the same labels but the slot's. So the cache keeps those in one map that
// they share, and each container's slot label apart (cachedLabels); a
// task the cache hands out gets a label map of its own, made again. Every
// decode of an engine's answer (a list, an inspect, a create, which Docker
// answers with an inspect) gives each container its own copy of every
// label key and value, and of its image and state: the cache keeps one
// copy of each, or after a restart a node of 100,000 containers would
// hold each of them 100,000 times.

import (
	"maps"
	"time"
	"unique"

	"github.com/replication-manager/replication-manager/api"
)

// cachedTask is an api.Task but its ID, which is the cache's key.
type cachedTask struct {
	name                          string
	labels                        cachedLabels
	image, imageID, state, health unique.Handle[string]
	// created, startedAt, finishedAt and checkedAt are Unix nanoseconds,
	// 0 for the zero time.
	created, startedAt, finishedAt, checkedAt int64
	exitCode                                  int
	killed                                    bool
	// rare holds what only some containers have: nil when none of it.
	rare *rareTaskFields
}

// rareTaskFields are the fields of an api.Task that most containers leave
// empty: a health check's output (an inspect of a container with a check),
// the container whose network it joined (a task's later parts), and a
// repo digest (which task controls leave empty).
type rareTaskFields struct {
	healthOutput, joinedTo, repoDigest string
}

// cachedLabels are a container's labels as the cache keeps them: all but
// its slot label in base, a map shared with the containers that have the
// same and never changed, and the slot label's value apart (the zero
// handle when it has none).
type cachedLabels struct {
	base map[string]string
	slot unique.Handle[string]
}

// labels is a label map of its own with every label.
func (l cachedLabels) labels() map[string]string {
	if l.slot == (unique.Handle[string]{}) {
		return maps.Clone(l.base)
	}
	m := make(map[string]string, len(l.base)+1)
	maps.Copy(m, l.base)
	m[api.LabelSlot] = l.slot.Value()
	return m
}

// controller is the value of the controller label.
func (l cachedLabels) controller() string { return l.base[api.LabelController] }

// isBaseOf reports whether base is labels but the slot label.
func isBaseOf(base, labels map[string]string) bool {
	n := len(base)
	if _, slotted := labels[api.LabelSlot]; slotted {
		n++
	}
	if len(labels) != n {
		return false
	}
	for k, v := range base {
		if w, ok := labels[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// splitLabels is labels as the cache keeps them, with base one of bases
// when one matches, else a new map of shared strings.
func splitLabels(labels map[string]string, bases []map[string]string) (l cachedLabels, isNew bool) {
	if labels == nil {
		return cachedLabels{}, false
	}
	if v, ok := labels[api.LabelSlot]; ok {
		l.slot = unique.Make(v)
	}
	for _, base := range bases {
		if isBaseOf(base, labels) {
			l.base = base
			return l, false
		}
	}
	l.base = make(map[string]string, len(labels))
	for k, v := range labels {
		if k != api.LabelSlot {
			l.base[intern(k)] = intern(v)
		}
	}
	return l, true
}

// intern is the one copy of s.
func intern(s string) string { return unique.Make(s).Value() }

// cacheForm is t as the cache keeps it, with its labels as labels says.
func cacheForm(t api.Task, labels cachedLabels) cachedTask {
	c := cachedTask{
		name: t.Name, labels: labels,
		image: unique.Make(t.Image), imageID: unique.Make(t.ImageID), state: unique.Make(t.State), health: unique.Make(t.Health),
		created: unixNanos(t.Created), startedAt: unixNanos(t.StartedAt), finishedAt: unixNanos(t.FinishedAt),
		checkedAt: unixNanos(t.CheckedAt), exitCode: t.ExitCode, killed: t.Killed,
	}
	if t.HealthOutput != "" || t.JoinedTo != "" || t.RepoDigest != "" {
		c.rare = &rareTaskFields{healthOutput: t.HealthOutput, joinedTo: t.JoinedTo, repoDigest: t.RepoDigest}
	}
	return c
}

// task is the container of id that c describes.
func (c cachedTask) task(id string) api.Task {
	t := c.unlabelled(id)
	t.Labels = c.labels.labels()
	return t
}

// unlabelled is task without the labels, which cost a map: for a
// comparison that needs but the controller label (labels.controller).
func (c cachedTask) unlabelled(id string) api.Task {
	t := api.Task{
		ID: id, Name: c.name,
		Image: c.image.Value(), ImageID: c.imageID.Value(), State: c.state.Value(), Health: c.health.Value(),
		Created: fromUnixNanos(c.created), StartedAt: fromUnixNanos(c.startedAt), FinishedAt: fromUnixNanos(c.finishedAt),
		CheckedAt: fromUnixNanos(c.checkedAt), ExitCode: c.exitCode, Killed: c.killed,
	}
	if c.rare != nil {
		t.HealthOutput, t.JoinedTo, t.RepoDigest = c.rare.healthOutput, c.rare.joinedTo, c.rare.repoDigest
	}
	return t
}

// joinedTo is the id of the container whose network this one joined, ""
// for none.
func (c cachedTask) joinedTo() string {
	if c.rare == nil {
		return ""
	}
	return c.rare.joinedTo
}

// unixNanos is t in Unix nanoseconds, 0 for the zero time (which has none:
// it is before 1678).
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNanos is the UTC time of n Unix nanoseconds, the zero time for 0.
func fromUnixNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
