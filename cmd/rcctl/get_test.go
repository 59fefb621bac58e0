package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// withStatus stores web (3 replicas, status written by hand, with a
// ReplicaFailure condition) and api (no status yet), and returns web's
// revision.
func withStatus(t *testing.T, e *testEnv) int64 {
	t.Helper()
	rev := e.create(newController("web", 3))
	api2 := newController("api", 1)
	api2.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-api:v2"
	e.create(api2)
	e.putStatus(&api.ReplicationControllerStatus{
		ID:                "web",
		Replicas:          3,
		ReadyReplicas:     2,
		AvailableReplicas: 1,
		ObservedRevision:  rev,
		Conditions: []api.Condition{
			{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonCreateFailed, Message: "create web-3: no such image: demo-task:latest", LastTransitionTime: e.now.Add(-2 * time.Minute)},
			{Type: api.ConditionCrashLoop, Status: "False", LastTransitionTime: e.now.Add(-time.Hour)},
		},
		LastSyncTime:      e.now.Add(-5 * time.Second),
		CreationTimestamp: e.now.Add(-3 * time.Hour),
	})
	return rev
}

func TestGetPrintsTableWithStatus(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)

	r := e.runCLI("get")

	assertStdout(t, r, ""+
		"ID    DESIRED   CURRENT   READY    UP-TO-DATE   STATUS          AGE         IMAGE\n"+
		"api   1         <none>    <none>   <none>       Pending         <unknown>   demo-api:v2\n"+
		"web   3         3         2        0            ImageNotFound   3h          demo-task:latest\n")
}

func TestGetOneController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)

	r := e.runCLI("get", "web")

	assertStdout(t, r, ""+
		"ID    DESIRED   CURRENT   READY   UP-TO-DATE   STATUS          AGE   IMAGE\n"+
		"web   3         3         2       0            ImageNotFound   3h    demo-task:latest\n")
}

func TestGetWideAddsSelectorAvailableRevisionConditions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := withStatus(t, e)
	apiRev := e.get("api").ModRevision

	r := e.runCLI("get", "-o", "wide")

	assertStdout(t, r, ""+
		"ID    DESIRED   CURRENT   READY    UP-TO-DATE   STATUS          AGE         IMAGE              SELECTOR   AVAILABLE   ETCD-REVISION   CONDITIONS       NODES    IMAGE-IDS\n"+
		"api   1         <none>    <none>   <none>       Pending         <unknown>   demo-api:v2        name=api   <none>      "+pad(apiRev)+"<none>           <none>   <none>\n"+
		"web   3         3         2        0            ImageNotFound   3h          demo-task:latest   name=web   1           "+pad(rev)+"ReplicaFailure   <none>   <none>\n")
}

// pad is a revision in the ETCD-REVISION column, padded to the header's width.
func pad(rev int64) string {
	s := strconv.FormatInt(rev, 10)
	return s + strings.Repeat(" ", max(len("ETCD-REVISION")+3-len(s), 3))
}

func TestGetShowsUndecodableSpecAsInvalidAndListsTheRest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	e.putRaw("broken", `{"id": "broken", "desiredState": {"replicas": "three"}}`)

	r := e.runCLI("get")

	assertStdout(t, r, ""+
		"ID       DESIRED     CURRENT   READY    UP-TO-DATE   STATUS        AGE         IMAGE\n"+
		"broken   <invalid>   <none>    <none>   <none>       InvalidSpec   <unknown>   <invalid>\n"+
		"web      3           <none>    <none>   <none>       Pending       <unknown>   demo-task:latest\n")
}

func TestGetWithNoControllersSaysSoOnStderr(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "get")

	assertStdout(t, r, "")
	if r.stderr != "No controllers found.\n" {
		t.Errorf("stderr %q, want %q", r.stderr, "No controllers found.\n")
	}
}

func TestGetUnknownControllerFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "get", "nope")

	assertFails(t, r, `controller "nope" not found`)
}

func TestGetJSONPrintsSpecAsStoredAndTheStatusUnderCurrentState(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withStatus(t, e)

	// api has no status: the spec as stored, nothing more
	assertStdout(t, e.run("", "get", "api", "-o", "json"), encode(t, e.get("api").Controller))

	r := e.run("", "get", "web", "-o", "json")
	assertOK(t, r)
	spec := strings.TrimSuffix(encode(t, newController("web", 3)), "\n}\n")
	if !strings.HasPrefix(r.stdout, spec) {
		t.Fatalf("stdout:\n%s\nwant the spec as stored first:\n%s", r.stdout, spec)
	}
	var doc struct {
		CurrentState *api.ReplicationControllerStatus `json:"currentState"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if st := doc.CurrentState; st == nil || st.ReadyReplicas != 2 || st.Replicas != 3 || len(st.Conditions) != 2 {
		t.Errorf("currentState %+v, want the stored status (3 replicas, 2 ready, 2 conditions)", st)
	}
}

func TestGetJSONRoundTripsThroughApply(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	before := e.revision()

	got := e.run("", "get", "web", "-o", "json")
	assertOK(t, got)
	r := e.run(got.stdout, "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" unchanged\n")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestGetYAMLRoundTripsThroughApply(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))

	got := e.run("", "get", "web", "-o", "yaml")
	assertOK(t, got)
	assertContains(t, got.stdout, "id: web\n", "replicas: 3\n")
	edited := strings.Replace(got.stdout, "replicas: 3", "replicas: 4", 1)
	r := e.run(edited, "apply", "-f", "-")

	assertStdout(t, r, "controller \"web\" configured\n")
	if n := e.get("web").Controller.DesiredState.Replicas; n != 4 {
		t.Errorf("stored replicas %d, want 4", n)
	}
}

func TestGetJSONWithoutIDListsItemsThatApplyReadsBack(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("api", 1))
	e.create(newController("web", 3))

	got := e.run("", "get", "-o", "json")
	assertOK(t, got)
	var list struct {
		Items []api.ReplicationController `json:"items"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &list); err != nil {
		t.Fatalf("decode %q: %v", got.stdout, err)
	}
	if len(list.Items) != 2 || list.Items[0].ID != "api" || list.Items[1].ID != "web" {
		t.Fatalf("items %+v, want api and web", list.Items)
	}

	r := e.run(got.stdout, "apply", "-f", "-")
	assertStdout(t, r, "controller \"api\" unchanged\ncontroller \"web\" unchanged\n")
}

func TestGetJSONWithNoControllersPrintsEmptyItems(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "get", "-o", "json")

	assertStdout(t, r, "{\n  \"items\": []\n}\n")
}

func TestGetJSONLeavesOutUndecodableSpecAndFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	e.putRaw("broken", `not json`)

	r := e.run("", "get", "-o", "json")

	assertFails(t, r, "left out", "broken")
	assertContains(t, r.stdout, `"id": "web"`)
	assertContains(t, r.stderr, `controller "broken" left out`)
}

func TestGetYAMLWithoutIDListsItemsThatApplyReadsBack(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	web := newController("web", 3)
	web.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/bin/sh", "-c", "a && b\nc"}
	e.create(newController("api", 1))
	e.create(web)
	before := e.revision()

	got := e.run("", "get", "-o", "yaml")
	assertOK(t, got)
	assertContains(t, got.stdout, "items:\n- id: api\n")
	r := e.run(got.stdout, "apply", "-f", "-")

	assertStdout(t, r, "controller \"api\" unchanged\ncontroller \"web\" unchanged\n")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d", before, after)
	}
}

func TestGetJSONListDoesNotEscapeHTML(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	web := newController("web", 3)
	web.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/bin/sh", "-c", "a && b"}
	e.create(web)

	r := e.run("", "get", "-o", "json")

	assertOK(t, r)
	assertContains(t, r.stdout, `"a && b"`)
}

func TestGetYAMLWithNoControllersPrintsEmptyItems(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	r := e.run("", "get", "-o", "yaml")

	assertStdout(t, r, "items: []\n")
}

func TestGetShowsUpToDateReplicasAndTheRolloutInConditions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	revs := map[string]int64{}
	for _, tt := range []struct {
		id                 string
		updated, available int
		cond               api.Condition
	}{
		{"done", 3, 3, api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRolloutComplete}},
		{"rolling", 1, 2, api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate}},
		{"stalled", 0, 2, api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonProgressDeadlineExceeded}},
	} {
		revs[tt.id] = e.create(newController(tt.id, 3))
		e.putStatus(&api.ReplicationControllerStatus{ID: tt.id, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: tt.updated, AvailableReplicas: tt.available,
			ObservedRevision: revs[tt.id], Conditions: []api.Condition{tt.cond}, CreationTimestamp: e.now.Add(-time.Hour)})
	}

	r := e.runCLI("get", "-o", "wide")

	assertStdout(t, r, ""+
		"ID        DESIRED   CURRENT   READY   UP-TO-DATE   STATUS                     AGE   IMAGE              SELECTOR       AVAILABLE   ETCD-REVISION   CONDITIONS                 NODES    IMAGE-IDS\n"+
		"done      3         3         3       3            Running                    60m   demo-task:latest   name=done      3           "+pad(revs["done"])+"<none>                     <none>   <none>\n"+
		"rolling   3         3         3       1            Progressing                60m   demo-task:latest   name=rolling   2           "+pad(revs["rolling"])+"Progressing                <none>   <none>\n"+
		"stalled   3         3         3       0            ProgressDeadlineExceeded   60m   demo-task:latest   name=stalled   2           "+pad(revs["stalled"])+"ProgressDeadlineExceeded   <none>   <none>\n")
}

// TestGetStatusSaysWhatIsWrongInOneWord: the STATUS column, as kubectl
// get pods shows CrashLoopBackOff, from the conditions and the spec.
func TestGetStatusSaysWhatIsWrongInOneWord(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	paused := newController("paused", 2)
	paused.DesiredState.Paused = true
	for _, tt := range []struct {
		rc   *api.ReplicationController
		cond api.Condition
	}{
		{newController("crashing", 2), api.Condition{Type: api.ConditionCrashLoop, Status: "True", Message: "exited with code 1"}},
		{newController("unplaced", 2), api.Condition{Type: api.ConditionReplicaFailure, Status: "True", Reason: api.ReasonUnschedulable}},
		{newController("blocked", 2), api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonBlocked}},
		{paused, api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRollingUpdate}},
		{newController("zero", 0), api.Condition{Type: api.ConditionProgressing, Status: "True", Reason: api.ReasonRolloutComplete}},
	} {
		rev := e.create(tt.rc)
		n := tt.rc.DesiredState.Replicas
		e.putStatus(&api.ReplicationControllerStatus{ID: tt.rc.ID, Replicas: n, ReadyReplicas: n, UpdatedReplicas: n, AvailableReplicas: n,
			ObservedRevision: rev, Conditions: []api.Condition{tt.cond}, CreationTimestamp: e.now.Add(-time.Hour)})
	}

	r := e.runCLI("get")

	assertOK(t, r)
	var got []string
	for _, cells := range tableRows(r.stdout) {
		got = append(got, cells[0]+" "+cells[5])
	}
	want := []string{"ID STATUS", "blocked Blocked", "crashing CrashLoop", "paused Paused", "unplaced Unschedulable", "zero ScaledToZero"}
	if !slices.Equal(got, want) {
		t.Errorf("ID and STATUS = %q, want %q\n%s", got, want, r.stdout)
	}
}

func TestGetWideShowsTheContainersOfEachNode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rev := withStatus(t, e)
	apiRev := e.get("api").ModRevision
	lease := e.grantLease(time.Hour)
	e.report(lease, "node-b", "web", reported("web", 1, e.now), reported("web", 3, e.now))
	e.report(lease, "node-a", "web", reported("web", 2, e.now))
	e.report(lease, "node-c", "web") // a slot there, no container yet

	r := e.runCLI("get", "-o", "wide")

	assertStdout(t, r, ""+
		"ID    DESIRED   CURRENT   READY    UP-TO-DATE   STATUS          AGE         IMAGE              SELECTOR   AVAILABLE   ETCD-REVISION   CONDITIONS       NODES                        IMAGE-IDS\n"+
		"api   1         <none>    <none>   <none>       Pending         <unknown>   demo-api:v2        name=api   <none>      "+pad(apiRev)+"<none>           <none>                       <none>\n"+
		"web   3         3         2        0            ImageNotFound   3h          demo-task:latest   name=web   1           "+pad(rev)+"ReplicaFailure   node-a:1,node-b:2,node-c:0   <none>\n")

	r = e.runCLI("get", "web", "-o", "wide")

	assertStdout(t, r, ""+
		"ID    DESIRED   CURRENT   READY   UP-TO-DATE   STATUS          AGE   IMAGE              SELECTOR   AVAILABLE   ETCD-REVISION   CONDITIONS       NODES                        IMAGE-IDS\n"+
		"web   3         3         2       0            ImageNotFound   3h    demo-task:latest   name=web   1           "+pad(rev)+"ReplicaFailure   node-a:1,node-b:2,node-c:0   <none>\n")

	// without -o wide, the table is as it always was
	assertStdout(t, e.runCLI("get"), ""+
		"ID    DESIRED   CURRENT   READY    UP-TO-DATE   STATUS          AGE         IMAGE\n"+
		"api   1         <none>    <none>   <none>       Pending         <unknown>   demo-api:v2\n"+
		"web   3         3         2        0            ImageNotFound   3h          demo-task:latest\n")
}
