package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

const (
	imageIDA = "sha256:aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111"
	imageIDB = "sha256:bbbbbbbbbbbb2222222222222222222222222222222222222222222222222222"
	digestA  = "demo-task@sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	drift    = "template 0123456789 runs " + imageIDA + " in slot(s) 1 and " + imageIDB + " in slot(s) 2"
)

// withDriftedImages stores web, whose slot 1 runs image A (with a repo
// digest) and slot 2 image B, as node-a reports it and the leader's
// status sums it.
func withDriftedImages(t *testing.T, e *testEnv) {
	t.Helper()
	rev := e.create(newController("web", 2))
	e.putStatus(&api.ReplicationControllerStatus{ID: "web", Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2,
		ObservedRevision: rev, CreationTimestamp: e.now.Add(-time.Hour),
		Conditions: []api.Condition{{Type: api.ConditionImageDrift, Status: "True", Reason: api.ReasonImageIDsDiffer, Message: drift,
			LastTransitionTime: e.now.Add(-time.Minute)}},
		Images: []api.RunningImage{
			{Image: "demo-task:latest", ImageID: imageIDA, RepoDigest: digestA, Containers: 1},
			{Image: "demo-task:latest", ImageID: imageIDB, Containers: 1},
		}})
	one, two := reported("web", 1, e.now.Add(-time.Hour)), reported("web", 2, e.now.Add(-time.Minute))
	one.ImageID, one.RepoDigest, two.ImageID = imageIDA, digestA, imageIDB
	e.report(e.grantLease(time.Hour), "node-a", "web", one, two)
}

func TestGetWideShowsTheImageIDsAndTheDrift(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withDriftedImages(t, e)

	r := e.runCLI("get", "web", "-o", "wide")

	assertOK(t, r)
	rows := tableRows(r.stdout)
	if len(rows) != 2 || rows[0][13] != "IMAGE-IDS" || rows[1][13] != "aaaaaaaaaaaa:1,bbbbbbbbbbbb:1" || rows[1][11] != api.ConditionImageDrift {
		t.Errorf("rows %q, want IMAGE-IDS aaaaaaaaaaaa:1,bbbbbbbbbbbb:1 and CONDITIONS ImageDrift", rows)
	}
}

func TestGetJSONCarriesTheImagesUnderCurrentState(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withDriftedImages(t, e)

	r := e.runCLI("get", "web", "-o", "json")

	assertOK(t, r)
	var doc struct {
		CurrentState api.ReplicationControllerStatus `json:"currentState"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, r.stdout)
	}
	want := []api.RunningImage{
		{Image: "demo-task:latest", ImageID: imageIDA, RepoDigest: digestA, Containers: 1},
		{Image: "demo-task:latest", ImageID: imageIDB, Containers: 1},
	}
	if !slices.Equal(doc.CurrentState.Images, want) {
		t.Errorf("currentState.images %+v, want %+v", doc.CurrentState.Images, want)
	}
	assertContains(t, r.stdout, `"imageID": "`+imageIDA+`"`, `"repoDigest": "`+digestA+`"`)
}

func TestDescribeShowsTheImageOfEachContainerAndTheDrift(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	withDriftedImages(t, e)

	r := e.runCLI("describe", "web")

	assertOK(t, r)
	assertContains(t, r.stdout,
		"  ImageDrift   True     ImageIDsDiffer   "+drift+"   60s\n",
		"Containers:\n"+
			"  NAME    NODE     SLOT   STATE     HEALTH   CREATED   IMAGE-ID\n"+
			"  web-1   node-a   1      running   <none>   60m ago   aaaaaaaaaaaa\n"+
			"  web-2   node-a   2      running   <none>   60s ago   bbbbbbbbbbbb\n",
		"Images:\n")
	_, images, _ := strings.Cut(r.stdout, "Images:\n")
	rows := tableRows(images)
	want := [][]string{
		{"IMAGE", "IMAGE-ID", "REPO-DIGEST", "CONTAINERS"},
		{"demo-task:latest", imageIDA, digestA, "1"},
		{"demo-task:latest", imageIDB, "<none>", "1"},
	}
	if len(rows) < len(want) || !slices.EqualFunc(rows[:len(want)], want, slices.Equal) {
		t.Errorf("images %q, want %q", rows, want)
	}
}
