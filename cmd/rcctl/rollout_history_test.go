package main

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// withImage is the controller of newController with another image.
func withImage(rc *api.ReplicationController, image string) *api.ReplicationController {
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
	return rc
}

// record stores a revision of web's history as the manager records it:
// the template of newController with image, first seen ago before the
// test's clock.
func record(t *testing.T, e *testEnv, rev int64, image string, ago time.Duration) api.Revision {
	t.Helper()
	tmpl := withImage(newController("web", 1), image).DesiredState.TaskTemplate
	r := api.Revision{Revision: rev, FirstSeen: e.now.Add(-ago), TemplateHash: api.TemplateHash(&tmpl), TaskTemplate: tmpl}
	if err := e.store.PutRevision(t.Context(), "web", &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRolloutHistoryListsTheRevisionsAndMarksTheCurrentOne(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 3), "demo-task:2"))
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 12, "demo-task:2", time.Hour)
	record(t, e, 11, "demo-task:3", 90*time.Minute)

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, ""+
		"REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"10         2026-11-29T08:00:00Z   demo-task:1\n"+
		"11         2026-11-29T08:30:00Z   demo-task:3\n"+
		"12         2026-11-29T09:00:00Z   demo-task:2   *\n")
}

func TestRolloutHistoryMarksOnlyTheNewestRecordOfTheCurrentTemplate(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 3), "demo-task:1"))
	// an undo to 10 brought its template back, recorded again as 12
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 11, "demo-task:2", 90*time.Minute)
	record(t, e, 12, "demo-task:1", time.Hour)

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, ""+
		"REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"10         2026-11-29T08:00:00Z   demo-task:1\n"+
		"11         2026-11-29T08:30:00Z   demo-task:2\n"+
		"12         2026-11-29T09:00:00Z   demo-task:1   *\n")
}

func TestRolloutHistoryWithoutRevisionsSaysSo(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, "")
	assertContains(t, r.stderr, "No revisions recorded for web")
}

func TestRolloutHistoryOfAnUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.runCLI("rollout", "history", "nope")

	assertFails(t, r, `controller "nope" not found`)
}

func TestRolloutHistoryOfAnUndecodableSpecMarksNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.putRaw("web", `{"id": "web", "desiredState": {"replicas": "three"}}`)
	record(t, e, 10, "demo-task:1", time.Hour)

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, ""+
		"REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"10         2026-11-29T09:00:00Z   demo-task:1\n")
	assertContains(t, r.stderr, "stored spec does not decode")
}
