package ctlview_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

func webSpec() *api.ReplicationController {
	return &api.ReplicationController{ID: "web", Labels: map[string]string{"name": "web"}, DesiredState: api.ReplicationControllerState{
		Replicas:      2,
		ReplicasInSet: map[string]string{"name": "web"},
		TaskTemplate: api.TaskTemplate{Labels: map[string]string{"name": "web"}, DesiredState: api.TaskState{
			Manifest: api.ContainerManifest{Containers: []api.Container{{Image: "demo"}}},
		}},
	}}
}

func TestEncodeWithStatusPutsTheStatusUnderCurrentStateAfterTheSpec(t *testing.T) {
	st := &api.ReplicationControllerStatus{ID: "web", Replicas: 2, ReadyReplicas: 1, LastSyncTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	data, err := ctlview.EncodeWithStatus(webSpec(), st)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if i, j := strings.Index(s, `"desiredState"`), strings.Index(s, `"currentState"`); i < 0 || j < i {
		t.Fatalf("currentState not after desiredState:\n%s", s)
	}
	var doc struct {
		ID           string                          `json:"id"`
		CurrentState api.ReplicationControllerStatus `json:"currentState"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != "web" || doc.CurrentState.ReadyReplicas != 1 {
		t.Errorf("decoded %+v, want web with readyReplicas 1", doc)
	}

	none, err := ctlview.EncodeWithStatus(webSpec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := api.Encode(webSpec())
	if err != nil {
		t.Fatal(err)
	}
	if string(none) != string(spec) {
		t.Errorf("without a status:\n%s\nwant the spec as api.Encode writes it:\n%s", none, spec)
	}
}

func TestEncodeListWithStatusMatchesStatusesByID(t *testing.T) {
	api2 := webSpec()
	api2.ID = "api"
	data, err := ctlview.EncodeListWithStatus([]*api.ReplicationController{api2, webSpec()},
		map[string]*api.ReplicationControllerStatus{"web": {ID: "web", Replicas: 7}})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			ID           string                           `json:"id"`
			CurrentState *api.ReplicationControllerStatus `json:"currentState"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].CurrentState != nil || list.Items[1].CurrentState == nil || list.Items[1].CurrentState.Replicas != 7 {
		t.Errorf("items %s, want api without currentState and web with 7 replicas", data)
	}
}

func TestJSONToYAMLKeepsTheKeyOrder(t *testing.T) {
	out, err := ctlview.JSONToYAML([]byte(`{"id": "web", "b": 1, "a": {"z": true, "y": [1, "x"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "id: web\nb: 1\na:\n  z: true\n  \"y\":\n  - 1\n  - x\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := ctlview.JSONToYAML([]byte("{")); err == nil {
		t.Error("invalid JSON: no error")
	}
}
