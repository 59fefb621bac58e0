package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// withImage is the controller of newController with another image.
func withImage(rc *api.ReplicationController, image string) *api.ReplicationController {
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
	return rc
}

// record stores a revision of web's history as a manager before numbered
// records recorded it: the template of newController with image, first
// seen ago before the test's clock, at etcd revision rev, with no number.
func record(t *testing.T, e *testEnv, rev int64, image string, ago time.Duration) api.Revision {
	t.Helper()
	return recordNumbered(t, e, 0, rev, image, ago)
}

// recordNumbered stores a revision of web's history as the manager
// records it now, numbered.
func recordNumbered(t *testing.T, e *testEnv, number, rev int64, image string, ago time.Duration) api.Revision {
	t.Helper()
	tmpl := withImage(newController("web", 1), image).DesiredState.TaskTemplate
	r := api.Revision{Number: number, Revision: rev, FirstSeen: e.now.Add(-ago), TemplateHash: api.TemplateHash(&tmpl), TaskTemplate: tmpl}
	if err := e.store.PutRevision(t.Context(), "web", &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRolloutHistoryListsTheNumberedRevisionsAndMarksTheCurrentOne(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 3), "demo-task:2"))
	// 1 and 2 pruned
	recordNumbered(t, e, 3, 10, "demo-task:1", 2*time.Hour)
	recordNumbered(t, e, 5, 12, "demo-task:2", time.Hour)
	recordNumbered(t, e, 4, 11, "demo-task:3", 90*time.Minute)

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, ""+
		"REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"3          2026-11-29T08:00:00Z   demo-task:1\n"+
		"4          2026-11-29T08:30:00Z   demo-task:3\n"+
		"5          2026-11-29T09:00:00Z   demo-task:2   *\n")
}

func TestRolloutHistoryNumbersHistoryWrittenBeforeNumbersByItsOrder(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 3), "demo-task:4"))
	// two records of an older manager, then two of this one's, which
	// numbered on from the newest it read
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 12, "demo-task:2", 90*time.Minute)
	recordNumbered(t, e, 3, 14, "demo-task:3", time.Hour)
	recordNumbered(t, e, 4, 16, "demo-task:4", 30*time.Minute)

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, ""+
		"REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"1          2026-11-29T08:00:00Z   demo-task:1\n"+
		"2          2026-11-29T08:30:00Z   demo-task:2\n"+
		"3          2026-11-29T09:00:00Z   demo-task:3\n"+
		"4          2026-11-29T09:30:00Z   demo-task:4   *\n")

	// undo takes the number, and writes the template of the record the
	// older manager wrote
	assertStdout(t, e.runCLI("rollout", "undo", "web", "--to-revision", "2"), "web rolled back to revision 2\n")
	if got := e.get("web").Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image; got != "demo-task:2" {
		t.Errorf("stored image %q, want demo-task:2", got)
	}
}

func TestRolloutHistoryMarksOnlyTheNewestRecordOfTheCurrentTemplate(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(withImage(newController("web", 3), "demo-task:1"))
	// an undo to 1 brought its template back, recorded again as 3
	record(t, e, 10, "demo-task:1", 2*time.Hour)
	record(t, e, 11, "demo-task:2", 90*time.Minute)
	record(t, e, 12, "demo-task:1", time.Hour)

	r := e.runCLI("rollout", "history", "web")

	assertStdout(t, r, ""+
		"REVISION   FIRST-SEEN             IMAGE         CURRENT\n"+
		"1          2026-11-29T08:00:00Z   demo-task:1\n"+
		"2          2026-11-29T08:30:00Z   demo-task:2\n"+
		"3          2026-11-29T09:00:00Z   demo-task:1   *\n")
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
		"1          2026-11-29T09:00:00Z   demo-task:1\n")
	assertContains(t, r.stderr, "stored spec does not decode")
}

// rolledBack stores web at demo-task:3, whose rollout failed, and a
// status saying the leader rolled it back to demo-task:1, the last one
// whose rollout completed; demo-task:2 (revision 2) was recorded between
// them but never completed.
func rolledBack(t *testing.T, e *testEnv) {
	t.Helper()
	e.create(withImage(newController("web", 3), "demo-task:3"))
	one := recordNumbered(t, e, 1, 10, "demo-task:1", 3*time.Hour)
	recordNumbered(t, e, 2, 11, "demo-task:2", 2*time.Hour)
	three := recordNumbered(t, e, 3, 12, "demo-task:3", time.Hour)
	e.putStatus(&api.ReplicationControllerStatus{ID: "web", Replicas: 3, Rollout: &api.RolloutRecord{
		CompletedRevision: one.Revision, CompletedNumber: one.Number, CompletedHash: one.TemplateHash,
		FailedRevision: three.Revision, FailedNumber: three.Number, FailedHash: three.TemplateHash,
		Reason: "ProgressDeadlineExceeded", RolledBack: true,
	}})
}

func TestRolloutHistoryMarksTheTemplateALeadersRollbackRestored(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rolledBack(t, e)

	r := e.runCLI("rollout", "history", "web", "-o", "wide")

	hash := func(image string) string {
		tmpl := withImage(newController("web", 1), image).DesiredState.TaskTemplate
		return api.TemplateHash(&tmpl)
	}
	width := max(len("TEMPLATE-HASH"), len(hash("demo-task:1"))) + 3 // the table's padding
	assertStdout(t, r, ""+
		fmt.Sprintf("REVISION   FIRST-SEEN             IMAGE         ETCD-REVISION   %-*sCURRENT\n", width, "TEMPLATE-HASH")+
		fmt.Sprintf("1          2026-11-29T07:00:00Z   demo-task:1   10              %-*s*\n", width, hash("demo-task:1"))+
		"2          2026-11-29T08:00:00Z   demo-task:2   11              "+hash("demo-task:2")+"\n"+
		"3          2026-11-29T09:00:00Z   demo-task:3   12              "+hash("demo-task:3")+"\n")
}
