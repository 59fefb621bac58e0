package main

import (
	"fmt"
	"strings"
	"testing"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/replication-manager/replication-manager/registry"
)

// TestApplyOfSeveralControllersIsOneTransaction: what changes is written
// at one revision, and what is unchanged keeps its ModRevision.
func TestApplyOfSeveralControllersIsOneTransaction(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	e.create(newController("db", 1))
	dbBefore := e.get("db").ModRevision
	files := []string{
		writeFile(t, "web.json", encode(t, newController("web", 5))),
		writeFile(t, "db.json", encode(t, newController("db", 1))),
		writeFile(t, "api.json", encode(t, newController("api", 2))),
	}

	r := e.run("", "apply", "-f", files[0], "-f", files[1], "-f", files[2])

	assertStdout(t, r, "controller \"web\" configured\ncontroller \"db\" unchanged\ncontroller \"api\" created\n")
	if web, api := e.get("web").ModRevision, e.get("api").ModRevision; web != api {
		t.Errorf("web at ModRevision %d and api at %d, want both written by one transaction", web, api)
	}
	if got := e.get("db").ModRevision; got != dbBefore {
		t.Errorf("db, unchanged, moved from ModRevision %d to %d", dbBefore, got)
	}
}

// TestApplyConflictPartWayWritesNothing: the second of two controllers
// changed after apply read it; the first, new, is not created either, and
// the error names the one that changed.
func TestApplyConflictPartWayWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("db", 1))
	read := e.get("db")
	if _, err := e.store.UpdateController(t.Context(), newController("db", 4), read.ModRevision); err != nil {
		t.Fatal(err)
	}

	_, err := applyAll(t.Context(), e.conn(), []applyItem{{newController("web", 2), nil}, {newController("db", 2), &read}})

	want := `controller "db" was changed by someone else since it was read; nothing written, run apply again`
	if err == nil || err.Error() != want {
		t.Fatalf("applyAll error %v, want %q", err, want)
	}
	assertNotFound(t, e, "web")
	if n := e.get("db").Controller.DesiredState.Replicas; n != 4 {
		t.Errorf("db: stored replicas %d, want the other writer's 4", n)
	}
}

// manyControllers is n controllers as one YAML stream.
func manyControllers(t *testing.T, n int) string {
	t.Helper()
	docs := make([]string, n)
	for i := range docs {
		docs[i] = yamlOf(t, fmt.Sprintf("c%03d", i), 1)
	}
	return strings.Join(docs, "---\n")
}

// TestApplyOfMoreControllersThanOneTransactionHoldsWritesNothing: apply is
// all-or-nothing, so it refuses a set that etcd cannot take in one
// transaction, before it connects, and says how to go on.
func TestApplyOfMoreControllersThanOneTransactionHoldsWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	before := e.revision()

	r := e.run(manyControllers(t, registry.MaxSpecsPerWrite+1), "apply", "-f", "-")

	assertFails(t, r, "apply: 129 controllers are more than the 128 that one etcd transaction holds", "nothing written", "several calls")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
	assertStdout(t, e.run(manyControllers(t, registry.MaxSpecsPerWrite), "apply", "-f", "-"), applied(registry.MaxSpecsPerWrite))
}

// applied is what apply prints after creating c000 .. c<n-1>.
func applied(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "controller \"c%03d\" created\n", i)
	}
	return b.String()
}

// TestApplyOnAnEtcdWithALowerTransactionLimitSaysSoAndWritesNothing: an
// etcd started with a --max-txn-ops below the default refuses the
// transaction; apply says why and nothing is written.
func TestApplyOnAnEtcdWithALowerTransactionLimitSaysSoAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(cfg *embed.Config) { cfg.MaxTxnOps = 2 })
	before := e.revision()

	r := e.run(manyControllers(t, 3), "apply", "-f", "-")

	assertFails(t, r, "too many or too large specs for one etcd transaction", "too many operations in txn request", "nothing written")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}
