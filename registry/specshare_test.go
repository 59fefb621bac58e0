package registry

import (
	"runtime"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// mirroredKV is revision rev of the spec of id, replicas of demo-task, as
// a mirror of store meets it.
func mirroredKV(t *testing.T, store *Store, id string, replicas int, rev int64) KV {
	t.Helper()
	data, err := api.Encode(demospec.Controller(id, "demo-task:latest", replicas, nil))
	if err != nil {
		t.Fatal(err)
	}
	return KV{Key: store.ControllerKey(id), Value: data, ModRev: rev, CreateRev: 1}
}

// TestMirroredSpecIsOneValuePerRevision: the mirrors of one Store (a
// manager's node agent and leader) that meet the same revision of a spec
// hold one decoded value; a newer revision is decoded anew; and the
// mirrors of another Store decode their own.
func TestMirroredSpecIsOneValuePerRevision(t *testing.T) {
	store := NewStore(nil, "/"+t.Name())
	first := store.MirroredSpec(mirroredKV(t, store, "web", 2, 10))
	again := store.MirroredSpec(mirroredKV(t, store, "web", 2, 10))
	if first.Err != nil || again.Err != nil {
		t.Fatalf("decode: %v, %v", first.Err, again.Err)
	}
	if first.Controller != again.Controller {
		t.Error("the same revision met twice was decoded twice")
	}
	if first.ID != "web" || first.ModRevision != 10 || first.CreateRevision != 1 {
		t.Errorf("spec = %+v, want web at revision 10, created at 1", first)
	}

	scaled := store.MirroredSpec(mirroredKV(t, store, "web", 3, 11))
	if scaled.Controller == first.Controller || scaled.Controller.DesiredState.Replicas != 3 {
		t.Errorf("revision 11 holds %d replicas, the same value as 10: %v; want its own, of 3",
			scaled.Controller.DesiredState.Replicas, scaled.Controller == first.Controller)
	}
	// a mirror behind the other still gets revision 10 as it was
	if old := store.MirroredSpec(mirroredKV(t, store, "web", 2, 10)); old.Controller.DesiredState.Replicas != 2 {
		t.Errorf("revision 10 met after 11 holds %d replicas, want 2", old.Controller.DesiredState.Replicas)
	}

	other := NewStore(nil, "/"+t.Name())
	if o := other.MirroredSpec(mirroredKV(t, other, "web", 3, 11)); o.Controller == scaled.Controller {
		t.Error("two stores share a decoded spec")
	}
	runtime.KeepAlive(first)
}

// TestMirroredSpecThatDoesNotDecode: a value that does not decode gives
// its error, every time it is met, and leaves the other keys' specs as
// they are (docs/CONTRACT.md: a malformed spec affects no other
// controller).
func TestMirroredSpecThatDoesNotDecode(t *testing.T) {
	store := NewStore(nil, "/"+t.Name())
	good := store.MirroredSpec(mirroredKV(t, store, "web", 2, 10))
	bad := KV{Key: store.ControllerKey("broken"), Value: []byte(`{"id": "broken", "desiredState": {`), ModRev: 11}
	for range 2 {
		if spec := store.MirroredSpec(bad); spec.Err == nil || spec.Controller != nil || spec.ID != "broken" {
			t.Errorf("malformed spec = %+v, want its error and no controller", spec)
		}
	}
	if again := store.MirroredSpec(mirroredKV(t, store, "web", 2, 10)); again.Controller != good.Controller {
		t.Error("a malformed spec changed what another key shares")
	}
	runtime.KeepAlive(good)
}

// TestMirroredSpecGoesWithItsLastHolder: the share does not keep a spec
// alive; once no mirror holds it, its entry goes too.
func TestMirroredSpecGoesWithItsLastHolder(t *testing.T) {
	store := NewStore(nil, "/"+t.Name())
	for i := range 100 {
		store.MirroredSpec(mirroredKV(t, store, "web", 2, int64(10+i)))
	}
	deadline := time.Now().Add(10 * time.Second)
	for held := sharedCount(store); held > 0; held = sharedCount(store) {
		if time.Now().After(deadline) {
			t.Fatalf("%d specs still shared with no one holding them", held)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// sharedCount is how many specs store's mirrors share.
func sharedCount(store *Store) int {
	store.shared.mu.Lock()
	defer store.shared.mu.Unlock()
	return len(store.shared.held)
}
