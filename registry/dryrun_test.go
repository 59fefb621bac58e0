package registry

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
)

func dryRunSteps(steps []DryRunStep) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Action + " " + s.Container
	}
	return out
}

func TestDryRunShowsEveryContainerTheManagerWouldChange(t *testing.T) {
	running := []api.Task{ours(1), ours(2), ours(3)}
	one, zero := intstr.FromInt(1), intstr.FromInt(0)
	newImage := func(rc *api.ReplicationController) *api.ReplicationController {
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:2"
		return rc
	}
	tests := []struct {
		name  string
		rc    *api.ReplicationController
		tasks []api.Task
		want  []string
	}{
		{"nothing to do", newController("web", 3), running, []string{}},
		{"a scale-up", newController("web", 5), running, []string{"create web-4", "create web-5"}},
		{"a scale-down", newController("web", 1), running, []string{"remove web-3", "remove web-2"}},
		{"a dead container", newController("web", 3), []api.Task{ours(1), ours(2), ctr("web", 3, api.StateCreated, testRegistryID)},
			[]string{"remove web-3", "create web-3"}},
		{"an image change rolls one at a time", newImage(newController("web", 3)), running,
			[]string{"replace web-3", "replace web-2", "replace web-1"}},
		{"an image change with a surge", func() *api.ReplicationController {
			rc := newImage(newController("web", 2))
			rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &one, MaxUnavailable: &zero}
			return rc
		}(), running[:2], []string{"replace web-2", "replace web-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := DryRun(tt.rc, tt.tasks, testRegistryID, Options{}, planNow)
			got := dryRunSteps(steps)
			if !slices.Equal(got, tt.want) {
				t.Errorf("dry run = %v, want %v", got, tt.want)
			}
		})
	}
}
