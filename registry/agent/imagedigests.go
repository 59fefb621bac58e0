package agent

// This file is what a node tells of the images its containers run
// (docs/CONTRACT.md, Images). A container's image ID comes with it from
// the engine's list, inspect or create, at no cost. The digest a registry
// knows that image by takes an image inspect: the node makes it once per
// image ID and keeps the answer, so that a sync costs the engine no call
// for it. An image ID known to have no repo digest (built here, never
// pushed) is asked again after each relist of the containers, when the
// cache also forgets the images no container runs any more.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/replication-manager/replication-manager/api"
)

// repoDigests holds the repo digests of image IDs, as the engine told
// them; safe for concurrent use.
type repoDigests struct {
	mu   sync.Mutex
	byID map[string][]string
}

func newRepoDigests() *repoDigests {
	return &repoDigests{byID: map[string][]string{}}
}

// known returns the repo digests of image id, and whether the engine was
// asked.
func (c *repoDigests) known(id string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.byID[id]
	return d, ok
}

func (c *repoDigests) store(id string, digests []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byID[id] = digests
}

// retain keeps the image IDs that running lists and that have a repo
// digest: the others are forgotten, or asked again when a container runs
// them.
func (c *repoDigests) retain(running []api.Task) {
	inUse := make(map[string]bool, len(running))
	for _, t := range running {
		inUse[t.ImageID] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, d := range c.byID {
		if !inUse[id] || len(d) == 0 {
			delete(c.byID, id)
		}
	}
}

// fill returns tasks with their RepoDigest, as far as the cache knows
// it; it asks nothing. tasks is returned as it is when no digest is
// known, else a copy.
func (c *repoDigests) fill(tasks []api.Task) []api.Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []api.Task
	for i, t := range tasks {
		d := api.RepoDigestFor(t.Image, c.byID[t.ImageID])
		if d == t.RepoDigest {
			continue
		}
		if out == nil {
			out = slices.Clone(tasks)
		}
		out[i].RepoDigest = d
	}
	if out == nil {
		return tasks
	}
	return out
}

// fillParts is partsOf with the parts' RepoDigest filled in.
func (c *repoDigests) fillParts(partsOf func(api.Task) []api.Task) func(api.Task) []api.Task {
	return func(t api.Task) []api.Task { return c.fill(partsOf(t)) }
}

// resolveDigests asks the engine for the repo digests of the images that
// controller id's containers run and that the node has not asked of: one
// image inspect per image ID. An image that is gone (removed by force
// under a container) has none. Other failures are returned, and the image
// is asked of again at the next report.
func (rm *Agent) resolveDigests(ctx context.Context, id string) error {
	var imageIDs []string // each once: a controller's containers mostly share one
	rm.tasks.scan(id, func(_ string, t cachedTask) {
		if imageID := t.imageID.Value(); imageID != "" && !slices.Contains(imageIDs, imageID) {
			imageIDs = append(imageIDs, imageID)
		}
	})
	var errs []error
	for _, imageID := range imageIDs {
		if _, ok := rm.digests.known(imageID); ok {
			continue
		}
		digests, err := rm.taskControl.RepoDigests(ctx, imageID)
		switch {
		case err == nil:
			rm.digests.store(imageID, slices.Clip(digests))
		case errors.Is(err, api.ErrImageNotFound):
			rm.digests.store(imageID, nil)
		default:
			errs = append(errs, fmt.Errorf("repo digests of %s: %w", imageID, err))
		}
	}
	return errors.Join(errs...)
}
