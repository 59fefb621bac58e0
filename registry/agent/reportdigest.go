package agent

// This file is how a node tells whether the tasks of its next report on a
// controller are those of its last one, without keeping the last one's:
// it keeps a digest of them. At 10,000 controllers × 10 the reported
// tasks were the largest thing a node kept per controller (17 MiB),
// besides the container cache itself.

import (
	"hash/maphash"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// digestSeed seeds every digest of the process; digests are never
// written anywhere, so they need not agree across processes.
var digestSeed = maphash.MakeSeed()

// reportedKey is what a report says of one task, its parts aside, in a
// comparable form: times by their instant, as time.Time.Equal compares
// them, whatever their location.
type reportedKey struct {
	name, id                   string
	slot                       int
	image, state, health, hash string
	created, startedAt         int64
	imageID, repoDigest        string
	createdZero, startedZero   bool
	monitored                  bool
}

// tasksDigest is a digest of tasks as a report lists them, in any order:
// the same tasks give the same digest, and different ones a different
// digest but for a chance of one in 2^64.
func tasksDigest(tasks []api.ReportedTask) uint64 {
	var sum uint64
	for _, t := range tasks {
		sum += taskDigest(t)
	}
	return sum
}

// activeDigest is tasksDigest of the report that would list active, each
// with the parts partsOf finds, under the monitor window window, without
// building the report.
func activeDigest(active []api.Task, partsOf func(api.Task) []api.Task, window time.Duration) uint64 {
	var sum uint64
	for _, t := range active {
		sum += taskDigest(reportedTask(t, partsOf(t), window))
	}
	return sum
}

func taskDigest(t api.ReportedTask) uint64 {
	d := maphash.Comparable(digestSeed, reportedKey{
		name: t.Name, id: t.ID, slot: t.Slot, image: t.Image, state: t.State, health: t.Health, hash: t.TemplateHash,
		created: t.Created.UnixNano(), startedAt: t.StartedAt.UnixNano(), imageID: t.ImageID, repoDigest: t.RepoDigest,
		createdZero: t.Created.IsZero(), startedZero: t.StartedAt.IsZero(), monitored: t.Monitored,
	})
	for _, p := range t.Parts { // in the report's order
		d = d*1099511628211 ^ maphash.Comparable(digestSeed, p)
	}
	return d
}
