package taskcontrol_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestFakeTagImageMovesTheReferenceForNewContainersOnly(t *testing.T) {
	f := newFake()
	before := mustCreate(t, f, spec("web", 1))
	if want := taskcontrol.FakeImageID("demo-task:latest"); before.ImageID != want {
		t.Fatalf("image ID of a reference never tagged: %q, want %q", before.ImageID, want)
	}
	const moved = "sha256:bbbb"
	f.TagImage("demo-task:latest", moved, "registry.example/demo-task@sha256:dddd")
	after := mustCreate(t, f, spec("web", 2))
	if after.ImageID != moved {
		t.Errorf("image ID after the tag moved: %q, want %q", after.ImageID, moved)
	}
	if got, err := f.InspectTask(t.Context(), before.ID); err != nil || got.ImageID != before.ImageID {
		t.Errorf("the first container's image ID: %q (%v), want it kept: %q", got.ImageID, err, before.ImageID)
	}

	digests, err := f.RepoDigests(t.Context(), moved)
	if err != nil || !slices.Equal(digests, []string{"registry.example/demo-task@sha256:dddd"}) {
		t.Errorf("repo digests of the tagged image: %q (%v)", digests, err)
	}
	if digests, err := f.RepoDigests(t.Context(), before.ImageID); err != nil || len(digests) != 0 {
		t.Errorf("repo digests of a made-up image a container runs: %q (%v), want none", digests, err)
	}
	if _, err := f.RepoDigests(t.Context(), "sha256:unknown"); !errors.Is(err, taskcontrol.ErrImageNotFound) {
		t.Errorf("repo digests of an unknown image: %v, want ErrImageNotFound", err)
	}
	if got := f.Counts().RepoDigests; got != 3 {
		t.Errorf("repo-digests calls counted: %d, want 3", got)
	}
}
