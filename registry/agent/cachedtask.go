package agent

// This file is a container as the cache keeps it. An api.Task is about 240
// bytes, and a Go map keeps a value of more than 128 bytes in an
// allocation of its own: at 100,000 containers, 100,000 small objects,
// each reallocated at every change the cache learned, scattered among the
// convergence's garbage of the same size. A cachedTask is 104 bytes, which
// the map holds in place: the repeated strings as handles to their one
// copy, the times as Unix nanoseconds, and the fields few containers have
// behind a pointer.

import (
	"time"
	"unique"

	"github.com/replication-manager/replication-manager/api"
)

// cachedTask is an api.Task but its ID, which is the cache's key.
type cachedTask struct {
	name                          string
	labels                        map[string]string
	image, imageID, state, health unique.Handle[string]
	// created, startedAt and finishedAt are Unix nanoseconds, 0 for the
	// zero time.
	created, startedAt, finishedAt int64
	exitCode                       int
	killed                         bool
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

// cacheForm is t as the cache keeps it.
func cacheForm(t api.Task) cachedTask {
	c := cachedTask{
		name: t.Name, labels: t.Labels,
		image: unique.Make(t.Image), imageID: unique.Make(t.ImageID), state: unique.Make(t.State), health: unique.Make(t.Health),
		created: unixNanos(t.Created), startedAt: unixNanos(t.StartedAt), finishedAt: unixNanos(t.FinishedAt),
		exitCode: t.ExitCode, killed: t.Killed,
	}
	if t.HealthOutput != "" || t.JoinedTo != "" || t.RepoDigest != "" {
		c.rare = &rareTaskFields{healthOutput: t.HealthOutput, joinedTo: t.JoinedTo, repoDigest: t.RepoDigest}
	}
	return c
}

// task is the container of id that c describes.
func (c cachedTask) task(id string) api.Task {
	t := api.Task{
		ID: id, Name: c.name, Labels: c.labels,
		Image: c.image.Value(), ImageID: c.imageID.Value(), State: c.state.Value(), Health: c.health.Value(),
		Created: fromUnixNanos(c.created), StartedAt: fromUnixNanos(c.startedAt), FinishedAt: fromUnixNanos(c.finishedAt),
		ExitCode: c.exitCode, Killed: c.killed,
	}
	if c.rare != nil {
		t.HealthOutput, t.JoinedTo, t.RepoDigest = c.rare.healthOutput, c.rare.joinedTo, c.rare.repoDigest
	}
	return t
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
