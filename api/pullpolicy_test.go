package api

import "testing"

func TestPullPolicyChangesTheTemplateHashAndDefaultsToIfNotPresent(t *testing.T) {
	rc := validWeb()
	before := TemplateHash(&rc.DesiredState.TaskTemplate)
	if got := container0(rc).PullPolicy(); got != PullIfNotPresent {
		t.Errorf("no imagePullPolicy is %q, want %q", got, PullIfNotPresent)
	}
	container0(rc).ImagePullPolicy = PullAlways
	if TemplateHash(&rc.DesiredState.TaskTemplate) == before {
		t.Error("imagePullPolicy Always did not change the template hash")
	}
}
