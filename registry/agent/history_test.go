package agent

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestEachNewTemplateIsRecordedOnceAndTheHistoryGoesWithTheController(t *testing.T) {
	h := newHarness(t, Options{RevisionHistoryLimit: 2})
	images := []string{"demo-task:1", "demo-task:2", "demo-task:3"}
	var revisions []int64
	for _, image := range images {
		rc := newController("web", 1)
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
		revisions = append(revisions, h.setSpec(rc))
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
	if len(revs) != 2 || revs[0].Revision != revisions[1] || revs[1].Revision != revisions[2] || got[0] != "demo-task:2" || got[1] != "demo-task:3" {
		t.Fatalf("history = %v (revisions %+v), want the newest 2: demo-task:2 at %d, demo-task:3 at %d", got, revs, revisions[1], revisions[2])
	}
	if want := api.TemplateHash(&revs[1].TaskTemplate); revs[1].TemplateHash != want {
		t.Errorf("recorded hash %s, want the template's %s", revs[1].TemplateHash, want)
	}

	h.deleteSpec("web")
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if revs, err := h.store.ListRevisions(t.Context(), "web"); err != nil || len(revs) != 0 {
		t.Errorf("history after the delete = %v, %v; want none", revs, err)
	}
}
