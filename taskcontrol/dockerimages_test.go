package taskcontrol_test

import (
	"errors"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// A container runs the image its reference named at its create, and says
// so in its create, list and inspect, also after the tag moved.
func TestDockerTasksCarryTheImageIDTheyWereCreatedFrom(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	base := dockertest.DemoImage(t)
	repo := "rmtest-imageid-" + dockertest.RunID()
	idB := dockertest.VariantImage(t, base, repo+":b")
	tag := repo + ":live"
	idA := dockertest.Tag(t, base, tag)
	if idA == idB {
		t.Fatalf("the variant has the base's ID %s", idA)
	}

	spec := testSpec(t, tag, 1)
	created := createTask(t, d, spec)
	if created.ImageID != idA {
		t.Errorf("create: image ID %q, want the tag's %q", created.ImageID, idA)
	}
	dockertest.Tag(t, idB, tag) // the tag moves; the container keeps its image
	inspected, err := d.InspectTask(t.Context(), created.ID)
	if err != nil || inspected.ImageID != idA || inspected.Image != tag {
		t.Errorf("inspect: image %q ID %q (%v), want %q ID %q", inspected.Image, inspected.ImageID, err, tag, idA)
	}
	waitListed(t, d, selectorOf(spec), created.ID, func(task api.Task) error {
		if task.ImageID != idA {
			return errors.New("list: image ID " + task.ImageID + ", want " + idA)
		}
		return nil
	})

	second := createTask(t, d, testSpec(t, tag, 2))
	if second.ImageID != idB {
		t.Errorf("create after the tag moved: image ID %q, want %q", second.ImageID, idB)
	}
}

func TestDockerRepoDigests(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	// an image of its own: the demo image gets a repo digest while another
	// package's test has pushed it to a registry
	id := dockertest.VariantImage(t, dockertest.DemoImage(t), "rmtest-digests-"+dockertest.RunID()+":built")

	digests, err := d.RepoDigests(t.Context(), id)
	if err != nil || len(digests) != 0 {
		t.Errorf("repo digests of an image built here: %q (%v), want none", digests, err)
	}
	missing := "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	if _, err := d.RepoDigests(t.Context(), missing); !errors.Is(err, taskcontrol.ErrImageNotFound) {
		t.Errorf("repo digests of a missing image: %v, want ErrImageNotFound", err)
	}
}
