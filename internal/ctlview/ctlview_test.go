package ctlview_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

func TestEncodeSpecsWritesItemsAsApplyReadsThem(t *testing.T) {
	rc := &api.ReplicationController{ID: "web", DesiredState: api.ReplicationControllerState{
		Replicas:      2,
		ReplicasInSet: map[string]string{"name": "web"},
		TaskTemplate: api.TaskTemplate{Labels: map[string]string{"name": "web"}, DesiredState: api.TaskState{
			Manifest: api.ContainerManifest{Containers: []api.Container{{Image: "demo", Command: api.Command{"a", "&&", "b"}}}},
		}},
	}}
	data, err := ctlview.EncodeSpecs([]*api.ReplicationController{rc})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "{\n  \"items\": [\n    {\n      \"id\": \"web\",") || !strings.HasSuffix(string(data), "}\n") {
		t.Errorf("not indented by two spaces with a final newline:\n%s", data)
	}
	if !strings.Contains(string(data), `"&&"`) {
		t.Errorf("'&' is HTML-escaped:\n%s", data)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	got, err := api.Decode(list.Items[0])
	if err != nil {
		t.Fatalf("the item does not decode as a spec: %v", err)
	}
	if got.ID != "web" || got.DesiredState.Replicas != 2 {
		t.Errorf("decoded %+v, want web with 2 replicas", got)
	}

	empty, err := ctlview.EncodeSpecs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"items\": []\n}\n"; string(empty) != want {
		t.Errorf("no specs: %q, want %q", empty, want)
	}
}

func TestHideEnvHidesEveryValueAndLeavesTheOriginalAlone(t *testing.T) {
	ds := api.ReplicationControllerState{TaskTemplate: api.TaskTemplate{DesiredState: api.TaskState{Manifest: api.ContainerManifest{
		Containers: []api.Container{
			{Name: "a", Env: []api.EnvVar{{Name: "TOKEN", Value: "s3cret"}, {Name: "MODE", Value: "demo"}}},
			{Name: "b"},
		},
		InitContainers: []api.Container{{Name: "migrate", Env: []api.EnvVar{{Name: "DB_PASSWORD", Value: "init-s3cret"}}}},
	}}}}
	hidden := ctlview.HideEnv(ds)
	if got := hidden.TaskTemplate.DesiredState.Manifest.InitContainers[0].Env; !slices.Equal(got, []api.EnvVar{{Name: "DB_PASSWORD", Value: ctlview.Hidden}}) {
		t.Errorf("init container's env %+v, want its value hidden", got)
	}
	if v := ds.TaskTemplate.DesiredState.Manifest.InitContainers[0].Env[0].Value; v != "init-s3cret" {
		t.Errorf("the original init container's value became %q", v)
	}

	got := hidden.TaskTemplate.DesiredState.Manifest.Containers
	want := []api.EnvVar{{Name: "TOKEN", Value: ctlview.Hidden}, {Name: "MODE", Value: ctlview.Hidden}}
	if !slices.Equal(got[0].Env, want) || got[1].Env != nil {
		t.Errorf("env %+v and %+v, want %+v and none", got[0].Env, got[1].Env, want)
	}
	if v := ds.TaskTemplate.DesiredState.Manifest.Containers[0].Env[0].Value; v != "s3cret" {
		t.Errorf("the original's value became %q", v)
	}
	data, err := json.Marshal(hidden)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cret") || strings.Contains(string(data), "demo") {
		t.Errorf("a value shows in %s", data)
	}
}

func TestSummarize(t *testing.T) {
	cond := func(typ, status, reason string) api.Condition {
		return api.Condition{Type: typ, Status: status, Reason: reason}
	}
	withConditions := func(cs ...api.Condition) *api.ReplicationControllerStatus {
		return &api.ReplicationControllerStatus{Conditions: cs}
	}
	undecodable := errors.New("decode controller: bad")
	for _, tc := range []struct {
		name    string
		status  *api.ReplicationControllerStatus
		specErr error
		state   string
		reasons []string
	}{
		{"no status yet", nil, nil, ctlview.StatePending, nil},
		{"no conditions", withConditions(), nil, ctlview.StateOK, nil},
		{"rollout complete", withConditions(cond("Progressing", "True", "RolloutComplete")), nil, ctlview.StateOK, nil},
		{"rolling", withConditions(cond("Progressing", "True", "RollingUpdate")), nil, ctlview.StateRolling, []string{"Progressing: RollingUpdate"}},
		{"replica failure", withConditions(cond("ReplicaFailure", "True", "CreateFailed")), nil, ctlview.StateFailing, []string{"ReplicaFailure: CreateFailed"}},
		{"replica failure with what failed", withConditions(api.Condition{Type: "ReplicaFailure", Status: "True", Reason: "CreateFailed", Message: "create web-3:\nno such image: demo-task:v3"}),
			nil, ctlview.StateFailing, []string{"ReplicaFailure: CreateFailed (create web-3: no such image: demo-task:v3)"}},
		{"a False failure condition is fine", withConditions(cond("ReplicaFailure", "False", "")), nil, ctlview.StateOK, nil},
		{"crash loop", withConditions(cond("CrashLoop", "True", "")), nil, ctlview.StateFailing, []string{"CrashLoop"}},
		{"invalid spec", withConditions(cond("InvalidSpec", "True", "InvalidSpec")), nil, ctlview.StateFailing, []string{"InvalidSpec: InvalidSpec"}},
		{"stalled rollout", withConditions(cond("Progressing", "False", "ProgressDeadlineExceeded")), nil, ctlview.StateFailing, []string{"Progressing=False: ProgressDeadlineExceeded"}},
		{"failing wins over rolling", withConditions(cond("Progressing", "True", "RollingUpdate"), cond("CrashLoop", "True", "BackOff")), nil, ctlview.StateFailing, []string{"CrashLoop: BackOff"}},
		{"undecodable before the manager says so", nil, undecodable, ctlview.StateFailing, []string{"InvalidSpec: Undecodable"}},
		{"undecodable as the manager says", withConditions(cond("InvalidSpec", "True", "Undecodable")), undecodable, ctlview.StateFailing, []string{"InvalidSpec: Undecodable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, reasons := ctlview.Summarize(tc.status, tc.specErr)
			if state != tc.state || !slices.Equal(reasons, tc.reasons) {
				t.Errorf("Summarize = %q %q, want %q %q", state, reasons, tc.state, tc.reasons)
			}
		})
	}
}
