package taskcontrol

// This file is the in-memory fake's images, as far as a container's image
// identity goes: each reference names an image ID, which a create fixes in
// the container, and TagImage moves a reference to another image, as
// `docker tag` (or a pull of a tag pushed again) does. The fake has no
// image content, and CheckImage does not look here.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// fakeImages are the references the test tagged and the repo digests of
// the image IDs the fake knows.
type fakeImages struct {
	tags    map[string]string   // reference -> image id
	digests map[string][]string // image id -> repo digests
}

// TagImage makes ref name the image id, whose repo digests are
// repoDigests: containers created from ref afterwards run id; those that
// run already keep the image they were created from. A reference never
// tagged names an image whose id is derived from it, without repo digests.
func (f *Fake) TagImage(ref, id string, repoDigests ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.images.tags == nil {
		f.images.tags = map[string]string{}
		f.images.digests = map[string][]string{}
	}
	f.images.tags[ref] = id
	f.images.digests[id] = slices.Clone(repoDigests)
}

// imageIDLocked is the id of the image ref names now.
func (f *Fake) imageIDLocked(ref string) string {
	if id, ok := f.images.tags[ref]; ok {
		return id
	}
	return FakeImageID(ref)
}

// FakeImageID is the id of the image that ref names in a Fake where it
// was never tagged.
func FakeImageID(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RepoDigests returns the repo digests TagImage gave image id: none for
// an image the fake made up for a reference never tagged. An id the fake
// knows of no container or tag gives an error wrapping ErrImageNotFound.
func (f *Fake) RepoDigests(ctx context.Context, id string) ([]string, error) {
	f.record(&f.counts.RepoDigests, "repo-digests "+id)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inspect image %s: %w", id, err)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if digests, ok := f.images.digests[id]; ok {
		return slices.Clone(digests), nil
	}
	for _, t := range f.byID {
		if t.ImageID == id {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrImageNotFound, id)
}
