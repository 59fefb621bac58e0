package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// syncUntil syncs id until ok holds of its status, at most 10 times.
func (h *harness) syncUntil(t *testing.T, id string, ok func(*api.ReplicationControllerStatus) error) *api.ReplicationControllerStatus {
	t.Helper()
	var err error
	for range 10 {
		h.clock.Advance(time.Minute)
		if err := h.sync(t, id); err != nil {
			t.Fatalf("sync: %v", err)
		}
		st := h.status(t, id)
		if err = ok(st); err == nil {
			return st
		}
	}
	t.Fatalf("after 10 syncs: %v", err)
	return nil
}

// imagesOf says which image each of id's reported containers runs, as
// "slot=imageID@repoDigest", in slot order.
func (h *harness) imagesOf(t *testing.T, id string) []string {
	t.Helper()
	reports, err := h.store.ListReports(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range reports {
		for _, task := range r.Tasks {
			out = append(out, fmt.Sprintf("%d=%s@%s", task.Slot, task.ImageID, task.RepoDigest))
		}
	}
	slices.Sort(out)
	return out
}

func allUpdated(replicas int) func(*api.ReplicationControllerStatus) error {
	return func(st *api.ReplicationControllerStatus) error {
		if st == nil || st.Replicas != replicas || st.UpdatedReplicas != replicas {
			return fmt.Errorf("status %+v, want %d updated replicas", st, replicas)
		}
		return nil
	}
}

// DESIGN.md section 12, image identity: the node reports the image each
// container runs and its repo digest, asked of the engine once per image;
// a tag that moved under a replaced container shows as ImageDrift, which
// a rollout restart clears.
func TestReportedImagesAndImageDriftAfterATagMoved(t *testing.T) {
	const (
		idA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		idB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)
	h := newHarness(t, roles.Options{})
	h.fake.TagImage("demo-task:latest", idA, "registry.example/demo-task@sha256:a1", "demo-task@sha256:a2")
	rc := newController("web", 2)
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MonitorSeconds: new(0)}
	h.setSpec(rc)
	h.syncUntil(t, "web", allUpdated(2))
	h.syncTimes(t, "web", 3)
	if got, want := h.imagesOf(t, "web"), []string{"1=" + idA + "@demo-task@sha256:a2", "2=" + idA + "@demo-task@sha256:a2"}; !slices.Equal(got, want) {
		t.Errorf("reported images %q, want %q (the digest of the container's own repository)", got, want)
	}
	if got := h.fake.Counts().RepoDigests; got != 1 {
		t.Errorf("%d image inspects for repo digests over 5 syncs, want 1: one per image", got)
	}

	// the tag moves, and slot 1's container goes behind the manager's back
	h.fake.TagImage("demo-task:latest", idB, "demo-task@sha256:b2")
	web1 := slices.IndexFunc(h.fake.Tasks(), func(t api.Task) bool { return t.Name == "web-1" })
	if err := h.fake.DeleteTask(t.Context(), h.fake.Tasks()[web1].ID); err != nil {
		t.Fatal(err)
	}
	st := h.syncUntil(t, "web", func(st *api.ReplicationControllerStatus) error {
		if st.FindCondition(api.ConditionImageDrift) == nil {
			return fmt.Errorf("no ImageDrift in %+v", st.Conditions)
		}
		return nil
	})
	c := st.FindCondition(api.ConditionImageDrift)
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	if want := "template " + hash + " runs " + idB + " in slot(s) 1 and " + idA + " in slot(s) 2"; c.Status != "True" || c.Message != want {
		t.Errorf("ImageDrift %+v, want True: %q", c, want)
	}
	wantImages := []api.RunningImage{
		{Image: "demo-task:latest", ImageID: idA, RepoDigest: "demo-task@sha256:a2", Containers: 1},
		{Image: "demo-task:latest", ImageID: idB, RepoDigest: "demo-task@sha256:b2", Containers: 1},
	}
	if !slices.Equal(st.Images, wantImages) {
		t.Errorf("status images %+v, want %+v", st.Images, wantImages)
	}
	if got := h.fake.Counts().RepoDigests; got != 2 {
		t.Errorf("%d image inspects for repo digests, want 2: one per image", got)
	}

	rc.DesiredState.TaskTemplate.RestartedAt = time.Now().UTC().Format(time.RFC3339)
	h.setSpec(rc)
	h.syncUntil(t, "web", func(st *api.ReplicationControllerStatus) error {
		if err := allUpdated(2)(st); err != nil {
			return err
		}
		if c := st.FindCondition(api.ConditionImageDrift); c != nil {
			return fmt.Errorf("ImageDrift %+v", c)
		}
		if len(st.Images) != 1 || st.Images[0].ImageID != idB {
			return fmt.Errorf("images %+v, want only %s", st.Images, idB)
		}
		return nil
	})
	if got := strings.Join(h.imagesOf(t, "web"), " "); strings.Contains(got, idA) {
		t.Errorf("reported images after the restart: %s, want only %s", got, idB)
	}
}
