package agent_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/roles"
)

func TestEachNewTemplateIsRecordedOnceAndTheHistoryGoesWithTheController(t *testing.T) {
	h := newHarness(t, roles.Options{RevisionHistoryLimit: 2})
	images := []string{"demo-task:1", "demo-task:2", "demo-task:3"}
	var revisions []int64
	for i, image := range images {
		rc := newController("web", 1)
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
		revisions = append(revisions, h.setSpec(rc))
		for range 4 { // a second sync of the same template records nothing
			if err := h.sync(t, "web"); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(api.DefaultMonitorSeconds * time.Second) // the rollout's step is over
		}
		if hash := api.TemplateHash(&rc.DesiredState.TaskTemplate); !runsOnly(h, hash) {
			t.Fatalf("web does not run %s alone after its rollout: %v", image, h.fake.Tasks())
		}
		revs, err := h.store.ListRevisions(t.Context(), "web")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := revs[len(revs)-1].Number, int64(i+1); got != want {
			t.Errorf("%s recorded as number %d, want %d", image, got, want)
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
	if revs[0].Number != 2 || revs[1].Number != 3 {
		t.Errorf("numbers after pruning = %d, %d; want 2, 3 (the pruned first keeps its number)", revs[0].Number, revs[1].Number)
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

// runsOnly reports whether every container of the harness runs template
// hash.
func runsOnly(h *harness, hash string) bool {
	tasks := h.fake.Tasks()
	for _, task := range tasks {
		if task.Labels[api.LabelTemplateHash] != hash {
			return false
		}
	}
	return len(tasks) > 0
}

func TestTheHistoryKeepsATemplateAnAssignmentStillNames(t *testing.T) {
	h := newHarness(t, roles.Options{RevisionHistoryLimit: 1})
	rc := newController("web", 1)
	h.setSpec(rc)
	h.syncTimes(t, "web", 2)
	first := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	if !runsOnly(h, first) {
		t.Fatalf("web does not run its first template: %v", h.fake.Tasks())
	}
	// a paused rollout keeps the slot on the first template while two
	// newer ones are recorded, one more than the limit keeps
	rc.DesiredState.Paused = true
	for _, image := range []string{"demo-task:2", "demo-task:3"} {
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
		h.setSpec(rc)
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
	}
	revs, err := h.store.ListRevisions(t.Context(), "web")
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string
	for _, r := range revs {
		hashes = append(hashes, r.TemplateHash)
	}
	last := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	if len(hashes) != 2 || hashes[0] != first || hashes[1] != last {
		t.Fatalf("history %v, want the named first %s and the newest %s (demo-task:2 pruned)", hashes, first, last)
	}
}

// TestANewLeaderNumbersOnFromHistoryWrittenBeforeNumbers: records an
// older manager wrote carry no number; they read as numbered by their
// order, and the next leader's record carries the number after them.
func TestANewLeaderNumbersOnFromHistoryWrittenBeforeNumbers(t *testing.T) {
	h := newHarness(t, roles.Options{RevisionHistoryLimit: 10})
	rc := newController("web", 1)
	for _, image := range []string{"demo-task:1", "demo-task:2"} {
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
		h.setSpec(rc)
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
	}
	// as an older manager wrote them: without "number"
	old, err := h.store.ListRevisions(t.Context(), "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range old {
		r.Number = 0
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.client.Put(t.Context(), h.store.HistoryPrefix("web")+strconv.FormatInt(r.Revision, 10), string(data)); err != nil {
			t.Fatal(err)
		}
	}
	// a new leader, which reads the history at its start
	h.startLeader(t, roles.Options{RevisionHistoryLimit: 10})
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:3"
	rev := h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}

	revs, err := h.store.ListRevisions(t.Context(), "web")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range revs {
		got = append(got, r.Number)
	}
	if !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("numbers = %v, want [1 2 3]", got)
	}
	if stored, err := h.store.GetRevision(t.Context(), "web", rev); err != nil || stored.Number != 3 {
		t.Errorf("the new leader's record = %+v, %v; want number 3 as written", stored, err)
	}
}

// TestANodeReadsAnOlderTemplateFromTheHistoryOnce: a slot that runs an
// older template than the spec's (a paused rollout here, a rollout's
// outdated slots at every step) needs that template at every sync; the
// node reads it from the history once and keeps it while a slot runs it,
// so that the syncs of a rollout do not each read etcd.
func TestANodeReadsAnOlderTemplateFromTheHistoryOnce(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := newController("web", 2)
	h.setSpec(rc)
	h.syncTimes(t, "web", 2)
	first := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	rc.DesiredState.Paused = true
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil { // reads the first template
		t.Fatal(err)
	}

	// the record goes bad: a node that read it again would fail its sync
	revs, err := h.store.ListRevisions(t.Context(), "web")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(revs, func(r api.Revision) bool { return r.TemplateHash == first })
	if i < 0 {
		t.Fatalf("no record of the first template %s in %v", first, revs)
	}
	if _, err := h.client.Put(t.Context(), h.store.HistoryPrefix("web")+strconv.FormatInt(revs[i].Revision, 10), "{"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.sync(t, "web"); err != nil {
			t.Fatalf("a sync read the history again: %v", err)
		}
	}
	if !runsOnly(h, first) || len(h.fake.Tasks()) != 2 {
		t.Fatalf("web does not run its 2 slots on the first template: %v", h.fake.Tasks())
	}
}
