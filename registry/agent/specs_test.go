package agent

import (
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/registry"
)

func spec(id string, rev int64) registry.Spec { return registry.Spec{ID: id, ModRevision: rev} }

func TestSpecCacheIgnoresStaleRevisions(t *testing.T) {
	c := newSpecCache()
	if !c.put(spec("web", 5)) {
		t.Fatal("first put of web@5 reported no change")
	}
	if c.put(spec("web", 3)) {
		t.Error("put of web@3 after web@5 was applied")
	}
	if c.put(spec("web", 5)) {
		t.Error("put of the same revision again was applied")
	}
	if got, _, _ := c.get("web"); got.ModRevision != 5 {
		t.Errorf("web revision = %d, want 5", got.ModRevision)
	}
	if c.remove("web", 4) {
		t.Error("delete at revision 4 removed web@5")
	}
	if !c.remove("web", 6) {
		t.Error("delete at revision 6 was not applied")
	}
	if c.put(spec("web", 6)) {
		t.Error("put of web@6 resurrected a controller deleted at 6")
	}
	if !c.put(spec("web", 7)) {
		t.Error("put of web@7 after the delete at 6 was ignored")
	}
}

func TestSpecCacheUnknownBeforeFirstList(t *testing.T) {
	c := newSpecCache()
	if _, exists, known := c.get("web"); exists || known {
		t.Errorf("before any list: exists=%v known=%v, want false false", exists, known)
	}
	c.replace(nil, 10)
	if _, exists, known := c.get("web"); exists || !known {
		t.Errorf("after an empty list: exists=%v known=%v, want false true", exists, known)
	}
}

func TestSpecCacheReplaceReportsChangesAndDeletions(t *testing.T) {
	c := newSpecCache()
	c.replace([]registry.Spec{spec("a", 1), spec("b", 2), spec("c", 3)}, 3)
	// b changes, c is deleted, d is new; e came from a watch event newer
	// than the list and must survive it.
	c.put(spec("e", 12))
	changed := c.replace([]registry.Spec{spec("a", 1), spec("b", 8), spec("d", 9)}, 10)
	slices.Sort(changed)
	if want := []string{"b", "c", "d"}; !slices.Equal(changed, want) {
		t.Errorf("changed = %v, want %v", changed, want)
	}
	ids := c.ids()
	slices.Sort(ids)
	if want := []string{"a", "b", "d", "e"}; !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
}
