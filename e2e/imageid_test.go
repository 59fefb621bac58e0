package e2e

// End-to-end test of image identity (docs/CONTRACT.md, Images) on the real
// engine, without a registry: two local images that differ by a label, a
// tag moved from one to the other under a running controller, a container
// removed behind the manager's back and replaced from the moved tag, and
// rcctl rollout restart bringing every slot to the tag's image.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestImageDriftAfterATagMovedIsClearedByARolloutRestart(t *testing.T) {
	t.Parallel() // a daemon, images, ids and labels of its own
	cli := dockertest.Client(t)
	base := dockertest.DemoImage(t)
	// the images first, so that their tags go after the containers
	repo := "rmtest-imagedrift-" + dockertest.RunID()
	idB := dockertest.VariantImage(t, base, repo+":b")
	tag := repo + ":live"
	idA := dockertest.Tag(t, base, tag)
	if idA == idB {
		t.Fatalf("the variant has the base's ID %s", idA)
	}
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("imagedrift")

	rc := controller(id, tag, 2, labels)
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		return wantImages(st, api.RunningImage{Image: tag, ImageID: idA, Containers: 2})
	})

	// the tag moves to B, and slot 1's container goes behind the
	// manager's back: its replacement is made from the tag, now B
	dockertest.Tag(t, idB, tag)
	if err := cli.ContainerRemove(t.Context(), api.TaskName(id, 1), container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	drift := "template " + hash + " runs " + idB + " in slot(s) 1 and " + idA + " in slot(s) 2"
	start := time.Now()
	st := waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionImageDrift)
		if c == nil || c.Status != "True" || c.Reason != api.ReasonImageIDsDiffer || c.Message != drift {
			return fmt.Errorf("ImageDrift %+v, want True: %s", c, drift)
		}
		return wantImages(st, api.RunningImage{Image: tag, ImageID: idA, Containers: 1}, api.RunningImage{Image: tag, ImageID: idB, Containers: 1})
	})
	t.Logf("ImageDrift %s after the container was removed", time.Since(start).Round(time.Millisecond))
	if running := runningImageIDs(t, cli, id); !slices.Equal(running, []string{idB, idA}) {
		t.Errorf("slots 1 and 2 run %q, want %s and %s", running, idB, idA)
	}

	// every view shows it
	assertContains(t, "rcctl describe", d.rcctl(t, "", "describe", id),
		"ImageDrift", drift, idA, idB, api.ShortImageID(idA), api.ShortImageID(idB))
	wide := d.rcctl(t, "", "get", id, "-o", "wide")
	assertContains(t, "rcctl get -o wide", wide, "ImageDrift", api.ShortImageID(idA)+":1", api.ShortImageID(idB)+":1")
	var doc struct {
		CurrentState api.ReplicationControllerStatus `json:"currentState"`
	}
	if out := d.rcctl(t, "", "get", id, "-o", "json"); json.Unmarshal([]byte(out), &doc) != nil || !slices.Equal(doc.CurrentState.Images, st.Images) {
		t.Errorf("rcctl get -o json: currentState.images %+v, want %+v:\n%s", doc.CurrentState.Images, st.Images, out)
	}
	page := "http://" + d.metricsAddr + "/controllers/" + id
	assertContains(t, "the status page", httpGet(t, page), drift, "<td>"+idA+"</td>", "<td>"+idB+"</td>",
		"<td>"+api.ShortImageID(idA)+"</td>", "<td>"+api.ShortImageID(idB)+"</td>")
	t.Run("the status page in a browser", func(t *testing.T) {
		b := newBrowser(t, requireBrowser(t))
		b.open(t, page)
		b.waitForRefresh(t, 1)
		images := eval[string](t, b, `document.getElementById('images').textContent`)
		containers := eval[string](t, b, `document.getElementById('containers').textContent`)
		if !strings.Contains(images, idA) || !strings.Contains(images, idB) ||
			!strings.Contains(containers, api.ShortImageID(idA)) || !strings.Contains(containers, api.ShortImageID(idB)) {
			t.Errorf("images %q, containers %q: want both IDs in each", images, containers)
		}
		b.assertNoConsoleErrors(t)
	})

	// a rollout restart makes every slot again from the tag: all run B
	d.rcctl(t, "", "rollout", "restart", id)
	start = time.Now()
	testpoll.Eventually(t, 90*time.Second, func() error {
		st := d.status(t, id)
		switch {
		case st == nil:
			return fmt.Errorf("no status of %s", id)
		case st.FindCondition(api.ConditionImageDrift) != nil:
			return fmt.Errorf("ImageDrift still: %+v", st.FindCondition(api.ConditionImageDrift))
		case st.UpdatedReplicas != 2 || st.AvailableReplicas != 2:
			return fmt.Errorf("%d updated and %d available, want 2", st.UpdatedReplicas, st.AvailableReplicas)
		}
		if err := wantImages(st, api.RunningImage{Image: tag, ImageID: idB, Containers: 2}); err != nil {
			return err
		}
		if running := runningImageIDs(t, cli, id); !slices.Equal(running, []string{idB, idB}) {
			return fmt.Errorf("slots 1 and 2 run %q, want %s", running, idB)
		}
		return nil
	})
	t.Logf("every slot on %s and ImageDrift gone %s after rcctl rollout restart", api.ShortImageID(idB), time.Since(start).Round(time.Millisecond))
}

// wantImages checks the images a status says the containers run.
func wantImages(st *api.ReplicationControllerStatus, want ...api.RunningImage) error {
	// the status orders them by reference, then ID; the IDs of the images
	// a run builds fall either way
	slices.SortFunc(want, func(a, b api.RunningImage) int {
		if c := strings.Compare(a.Image, b.Image); c != 0 {
			return c
		}
		return strings.Compare(a.ImageID, b.ImageID)
	})
	if !slices.Equal(st.Images, want) {
		return fmt.Errorf("status images %+v, want %+v", st.Images, want)
	}
	return nil
}

// runningImageIDs are the image IDs of id's running containers, in slot
// order, as the engine lists them.
func runningImageIDs(t *testing.T, cli dockerClient, id string) []string {
	t.Helper()
	running := runningOf(containers(t, cli, id))
	slices.SortFunc(running, func(a, b container.Summary) int {
		return strings.Compare(a.Labels[api.LabelSlot], b.Labels[api.LabelSlot])
	})
	out := make([]string, len(running))
	for i, c := range running {
		out[i] = c.ImageID
	}
	return out
}

// assertContains fails the test for each of wants that what does not
// contain.
func assertContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s does not contain %q:\n%s", what, want, got)
		}
	}
}
