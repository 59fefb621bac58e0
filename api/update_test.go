package api

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestStrategyDefaults(t *testing.T) {
	var ds ReplicationControllerState
	s := ds.Strategy()
	if s.Type != RollingUpdate || s.MaxUnavailable.IntValue() != 1 || s.MaxSurge.IntValue() != 0 || *s.ProgressDeadlineSeconds != 600 {
		t.Errorf("defaults = %+v, want RollingUpdate, maxUnavailable 1, maxSurge 0, deadline 600", s)
	}
	if surge, unavailable := s.Bounds(10); surge != 0 || unavailable != 1 {
		t.Errorf("default bounds of 10 = %d, %d; want 0, 1", surge, unavailable)
	}
}

func TestBoundsRoundSurgeUpAndUnavailableDown(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt(n); return &v }
	tests := []struct {
		surge, unavailable         *intstr.IntOrString
		replicas                   int
		wantSurge, wantUnavailable int
	}{
		{pct("25%"), pct("25%"), 10, 3, 2},
		{pct("10%"), pct("10%"), 5, 1, 0},
		{num(2), num(0), 3, 2, 0},
		{pct("0%"), pct("10%"), 5, 0, 1}, // both round to 0: one may be unavailable, or nothing moves
		{pct("100%"), num(0), 4, 4, 0},
	}
	for _, tt := range tests {
		s := UpdateStrategy{MaxSurge: tt.surge, MaxUnavailable: tt.unavailable}
		surge, unavailable := s.Bounds(tt.replicas)
		if surge != tt.wantSurge || unavailable != tt.wantUnavailable {
			t.Errorf("Bounds(%s, %s of %d) = %d, %d; want %d, %d", tt.surge, tt.unavailable, tt.replicas, surge, unavailable, tt.wantSurge, tt.wantUnavailable)
		}
	}
}

func TestValidateUpdateStrategy(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"defaults", `{}`, ""},
		{"on delete", `{"type": "OnDelete"}`, ""},
		{"percentages", `{"maxSurge": "25%", "maxUnavailable": "0%"}`, ""},
		{"unknown type", `{"type": "Recreate"}`, `desiredState.updateStrategy.type: must be RollingUpdate or OnDelete, got "Recreate"`},
		{"both zero", `{"maxSurge": 0, "maxUnavailable": 0}`, "desiredState.updateStrategy.maxUnavailable: may not be 0 when maxSurge is 0"},
		{"both zero percent", `{"maxSurge": "0%", "maxUnavailable": "0%"}`, "may not be 0 when maxSurge is 0"},
		{"unavailable 0 with the default surge", `{"maxUnavailable": 0}`, "may not be 0 when maxSurge is 0"},
		{"negative", `{"maxSurge": -1}`, "desiredState.updateStrategy.maxSurge: must not be negative, got -1"},
		{"not a percentage", `{"maxSurge": "a lot"}`, `desiredState.updateStrategy.maxSurge: must be an integer or a percentage from 0% to 100%, got "a lot"`},
		{"over 100%", `{"maxUnavailable": "150%"}`, "desiredState.updateStrategy.maxUnavailable: must be an integer or a percentage"},
		{"deadline", `{"progressDeadlineSeconds": 0}`, "desiredState.updateStrategy.progressDeadlineSeconds: must be at least 1, got 0"},
		{"deadline within minReadySeconds", `{"progressDeadlineSeconds": 5}`, "must be more than desiredState.minReadySeconds (10), got 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"id": "web", "desiredState": {"replicas": 2, "minReadySeconds": 10, "replicasInSet": {"name": "web"},
				"updateStrategy": ` + tt.spec + `, "paused": true,
				"taskTemplate": {"labels": {"name": "web"}, "desiredState": {"manifest": {"containers": [{"image": "demo-task:latest"}]}}}}}`
			rc, err := Decode([]byte(doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			err = Validate(rc, ValidateOptions{Key: "web"})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRestartedAtChangesTheTemplateHashAndMustBeATime(t *testing.T) {
	tmpl := TaskTemplate{Labels: map[string]string{"name": "web"}}
	before := TemplateHash(&tmpl)
	tmpl.RestartedAt = "2026-12-01T10:00:00Z"
	if TemplateHash(&tmpl) == before {
		t.Error("restartedAt does not change the template hash")
	}
	rc := &ReplicationController{ID: "web", DesiredState: ReplicationControllerState{
		Replicas: 1, ReplicasInSet: map[string]string{"name": "web"},
		TaskTemplate: TaskTemplate{Labels: map[string]string{"name": "web"}, RestartedAt: "yesterday",
			DesiredState: TaskState{Manifest: ContainerManifest{Containers: []Container{{Image: "demo-task:latest"}}}}},
	}}
	if err := Validate(rc, ValidateOptions{}); err == nil || !strings.Contains(err.Error(), "desiredState.taskTemplate.restartedAt: must be an RFC 3339 time") {
		t.Errorf("Validate = %v, want restartedAt refused", err)
	}
}
