package leader

import (
	"slices"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

func TestDryRunSaysPerNodeWhetherTheImageWouldBePulled(t *testing.T) {
	rc := demospec.Controller("web", "reg:5000/web:2", 3, nil)
	reports := []api.NodeReport{
		{Node: "a", Tasks: []api.ReportedTask{{Name: "web-1", Image: "reg:5000/web:2"}}},
		{Node: "b", Pulling: []api.PullingSlot{{Slot: 2, Image: "reg:5000/web:2"}}},
		{Node: "c", Tasks: []api.ReportedTask{{Name: "web-3", Image: "reg:5000/web:1"}}},
	}
	steps := []DryRunStep{{Action: "create", Node: "c"}, {Action: "replace", Node: "a"}, {Action: "move", Node: "b", From: "c"},
		{Action: "remove", Node: "d"}}
	want := []DryRunImage{
		{Node: "a", Image: "reg:5000/web:2", Pull: DryRunPullThere},
		{Node: "b", Image: "reg:5000/web:2", Pull: DryRunPullPulling},
		{Node: "c", Image: "reg:5000/web:2", Pull: DryRunPullIfMissing},
	}
	if got := dryRunImages(rc, reports, steps); !slices.Equal(got, want) {
		t.Errorf("IfNotPresent: %+v, want %+v", got, want)
	}
	for policy, pull := range map[string]string{api.PullAlways: DryRunPullAlways, api.PullNever: DryRunPullNever} {
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = policy
		got := dryRunImages(rc, reports, steps)
		if len(got) != 3 || got[0].Pull != pull || got[2].Pull != pull {
			t.Errorf("%s: %+v, want %q on every node", policy, got, pull)
		}
	}
}
