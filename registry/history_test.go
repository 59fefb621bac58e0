package registry

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestEachNewTemplateIsRecordedOnceAndTheHistoryGoesWithTheController(t *testing.T) {
	h := newHarness(t, Options{RevisionHistoryLimit: 2})
	images := []string{"demo-task:1", "demo-task:2", "demo-task:3"}
	for i, image := range images {
		rc := newController("web", 1)
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
		h.setSpec(rc, int64(10+i))
		for range 2 { // a second sync of the same template records nothing
			if err := h.sync(t, "web"); err != nil {
				t.Fatal(err)
			}
		}
	}
	revs, err := h.store.ListRevisions(t.Context(), "web")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range revs {
		got = append(got, r.Image())
	}
	if len(revs) != 2 || revs[0].Revision != 11 || revs[1].Revision != 12 || got[0] != "demo-task:2" || got[1] != "demo-task:3" {
		t.Fatalf("history = %v (revisions %+v), want the newest 2: demo-task:2 at 11, demo-task:3 at 12", got, revs)
	}
	if want := api.TemplateHash(&revs[1].TaskTemplate); revs[1].TemplateHash != want {
		t.Errorf("recorded hash %s, want the template's %s", revs[1].TemplateHash, want)
	}

	h.deleteSpec("web", 20)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if revs, err := h.store.ListRevisions(t.Context(), "web"); err != nil || len(revs) != 0 {
		t.Errorf("history after the delete = %v, %v; want none", revs, err)
	}
}
