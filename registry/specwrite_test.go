package registry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// TestWriteControllersIsAllOrNothing: three specs (one new, one changed,
// one unchanged) go in together; when any one key is no longer as read,
// whether changed, created or deleted meanwhile, none is written and the
// error names each key that moved.
func TestWriteControllersIsAllOrNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := testClient(t)
	store := NewStore(client, "/"+t.Name())
	rc := func(id string, replicas int) *api.ReplicationController {
		return demospec.Controller(id, "demo-task:latest", replicas, nil)
	}
	revOf := func(id string) int64 {
		t.Helper()
		spec, err := store.GetController(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return spec.ModRevision
	}
	for _, id := range []string{"web", "db"} {
		if _, err := store.CreateController(ctx, rc(id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	read := map[string]int64{"web": revOf("web"), "db": revOf("db"), "api": 0}
	writes := func() []SpecWrite {
		return []SpecWrite{
			{Controller: rc("web", 3), ModRevision: read["web"]},
			{Controller: rc("db", 1), ModRevision: read["db"], Unchanged: true},
			{Controller: rc("api", 2), ModRevision: read["api"]},
		}
	}

	for _, tt := range []struct {
		name    string
		meddle  func() // what another client does between the read and the write
		undo    func()
		blamed  string
		nowZero bool
	}{
		{name: "a changed key", blamed: "web",
			meddle: func() { mustUpdate(t, store, rc("web", 9), read["web"]) },
			undo:   func() { read["web"] = revOf("web") }},
		{name: "an unchanged key edited meanwhile", blamed: "db",
			meddle: func() { mustUpdate(t, store, rc("db", 5), read["db"]) },
			undo:   func() { read["db"] = revOf("db") }},
		{name: "a new key created meanwhile", blamed: "api",
			meddle: func() {
				if _, err := store.CreateController(ctx, rc("api", 7)); err != nil {
					t.Fatal(err)
				}
			},
			undo: func() {
				if err := store.DeleteController(ctx, "api"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a key deleted meanwhile", blamed: "web", nowZero: true,
			meddle: func() {
				if err := store.DeleteController(ctx, "web"); err != nil {
					t.Fatal(err)
				}
			},
			undo: func() {
				if _, err := store.CreateController(ctx, rc("web", 1)); err != nil {
					t.Fatal(err)
				}
				read["web"] = revOf("web")
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.meddle()
			before := map[string]int64{"web": revOf("web"), "db": revOf("db"), "api": revOf("api")}
			_, err := store.WriteControllers(ctx, writes())
			var conflict *ConflictError
			if !errors.As(err, &conflict) || !errors.Is(err, ErrConflict) {
				t.Fatalf("WriteControllers = %v, want a ConflictError", err)
			}
			if len(conflict.Conflicts) != 1 || conflict.Conflicts[0].ID != tt.blamed || (conflict.Conflicts[0].Now == 0) != tt.nowZero {
				t.Errorf("conflicts %+v, want only %s", conflict.Conflicts, tt.blamed)
			}
			for id, rev := range before {
				if now := revOf(id); now != rev {
					t.Errorf("%s moved from ModRevision %d to %d: part of a refused write went in", id, rev, now)
				}
			}
			tt.undo()
		})
	}

	rev, err := store.WriteControllers(ctx, writes())
	if err != nil {
		t.Fatalf("WriteControllers with every key as read: %v", err)
	}
	if revOf("web") != rev || revOf("api") != rev {
		t.Errorf("web and api at ModRevision %d and %d, want both at the write's %d", revOf("web"), revOf("api"), rev)
	}
	if got := revOf("db"); got != read["db"] {
		t.Errorf("db, unchanged, moved from ModRevision %d to %d", read["db"], got)
	}
}

func mustUpdate(t *testing.T, store *Store, rc *api.ReplicationController, rev int64) {
	t.Helper()
	if _, err := store.UpdateController(t.Context(), rc, rev); err != nil {
		t.Fatal(err)
	}
}

// TestWriteControllersRefusesMoreThanOneTransactionHolds: one spec past
// MaxSpecsPerWrite is refused before etcd is asked, and nothing is
// written; MaxSpecsPerWrite of them go in.
func TestWriteControllersRefusesMoreThanOneTransactionHolds(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := NewStore(testClient(t), "/"+t.Name())
	var ws []SpecWrite
	for i := range MaxSpecsPerWrite + 1 {
		ws = append(ws, SpecWrite{Controller: demospec.Controller(fmt.Sprintf("c%03d", i), "demo-task:latest", 1, nil)})
	}
	if _, err := store.WriteControllers(ctx, ws); !errors.Is(err, ErrTooManySpecs) {
		t.Fatalf("WriteControllers of %d specs = %v, want ErrTooManySpecs", len(ws), err)
	}
	if specs, _, err := store.ListControllers(ctx); err != nil || len(specs) != 0 {
		t.Fatalf("after a refused write: %d specs (%v), want none", len(specs), err)
	}
	if _, err := store.WriteControllers(ctx, ws[:MaxSpecsPerWrite]); err != nil {
		t.Fatalf("WriteControllers of %d specs: %v", MaxSpecsPerWrite, err)
	}
	if _, err := store.WriteControllers(ctx, []SpecWrite{ws[0], ws[0]}); err == nil {
		t.Error("WriteControllers of one id twice succeeded")
	}
}
