package registry

import (
	"context"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// Issue 26, item 9: a write of more changes than one transaction takes
// goes in parts, and every change was taken to have gone in at the first
// part's revision, so the slots a later part took off a node were held
// only until the reports passed that earlier revision. Each change now
// carries the revision of its own part.
func TestEachPartOfALargeLeaderWriteCarriesItsOwnRevision(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := NewStore(testClient(t), "/"+t.Name())
	w := LeaderWrite{ID: "web"}
	for slot := 1; slot <= assignmentBatch+1; slot++ {
		w.Changes = append(w.Changes, AssignChange{ID: "web", Slot: slot, Next: &api.Assignment{Node: "a", Revision: 1, TemplateHash: "h"}})
	}
	first, err := store.CommitLeader(ctx, nil, w)
	if err != nil {
		t.Fatal(err)
	}
	head, last := w.Changes[0].Rev, w.Changes[assignmentBatch].Rev
	if head != first || last <= head {
		t.Fatalf("revisions: first part %d, second part %d, returned %d; want the second part later than the first, returned", head, last, first)
	}
	now, err := store.CurrentRevision(ctx)
	if err != nil || now < last {
		t.Errorf("current revision %d (%v), want at least the last part's %d", now, err, last)
	}
}
