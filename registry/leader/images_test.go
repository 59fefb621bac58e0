package leader

import (
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

const (
	imageA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	imageB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	imageC = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

// running is a reported container of web's slot, of template hash, made
// from demo:1 and running image id.
func running(slot int, hash, id string) api.ReportedTask {
	return api.ReportedTask{Name: api.TaskName("web", slot), ID: "c" + string(rune('0'+slot)), Slot: slot, Image: "demo:1",
		ImageID: id, State: api.StateRunning, TemplateHash: hash}
}

// withSidecar adds a part named sidecar, of image sidecar:1 running id.
func withSidecar(t api.ReportedTask, id string) api.ReportedTask {
	t.Parts = []api.ReportedPart{{Name: t.Name + ".sidecar", Container: "sidecar", Image: "sidecar:1", ImageID: id, State: api.StateRunning}}
	return t
}

// groupsOf groups each node's containers as the leader does when a
// report comes, in node order.
func groupsOf(nodes ...[]api.ReportedTask) []imageGroup {
	var out []imageGroup
	for _, tasks := range nodes {
		out = append(out, imageGroups(tasks)...)
	}
	return out
}

func TestImageDrift(t *testing.T) {
	tests := []struct {
		name  string
		nodes [][]api.ReportedTask
		want  string
	}{
		{
			name:  "every container of the template runs one image",
			nodes: [][]api.ReportedTask{{running(1, "h1", imageA), running(2, "h1", imageA)}, {running(3, "h1", imageA)}},
		},
		{
			name:  "two slots of one node run different images of one template",
			nodes: [][]api.ReportedTask{{running(1, "h1", imageA), running(2, "h1", imageB), running(3, "h1", imageA)}},
			want:  "template h1 runs " + imageA + " in slot(s) 1, 3 and " + imageB + " in slot(s) 2",
		},
		{
			name:  "two nodes run different images of one template",
			nodes: [][]api.ReportedTask{{running(2, "h1", imageB)}, {running(1, "h1", imageA), running(3, "h1", imageA)}},
			want:  "template h1 runs " + imageA + " in slot(s) 1, 3 and " + imageB + " in slot(s) 2",
		},
		{
			name:  "two templates of two images are a rollout, not a drift",
			nodes: [][]api.ReportedTask{{running(1, "h1", imageA), running(2, "h2", imageB)}},
		},
		{
			name: "an old template that drifted is named while a rollout replaces it",
			nodes: [][]api.ReportedTask{{running(1, "h1", imageA), running(2, "h1", imageB), running(3, "h2", imageC),
				running(4, "h2", imageC)}},
			want: "template h1 runs " + imageA + " in slot(s) 1 and " + imageB + " in slot(s) 2",
		},
		{
			name:  "a sidecar that drifted is named by its container",
			nodes: [][]api.ReportedTask{{withSidecar(running(1, "h1", imageA), imageB), withSidecar(running(2, "h1", imageA), imageC)}},
			want:  "template h1 container sidecar runs " + imageB + " in slot(s) 1 and " + imageC + " in slot(s) 2",
		},
		{
			name:  "a container without an image ID is not compared",
			nodes: [][]api.ReportedTask{{running(1, "h1", imageA), running(2, "h1", "")}},
		},
		{
			name:  "containers without a template hash are not compared",
			nodes: [][]api.ReportedTask{{running(1, "", imageA), running(2, "", imageB)}},
		},
		{
			name: "two templates that drifted are named in hash order",
			nodes: [][]api.ReportedTask{{running(1, "h2", imageA), running(2, "h2", imageB)},
				{running(3, "h1", imageB), running(4, "h1", imageC)}},
			want: "template h1 runs " + imageB + " in slot(s) 3 and " + imageC + " in slot(s) 4; " +
				"template h2 runs " + imageA + " in slot(s) 1 and " + imageB + " in slot(s) 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := imageDrift(groupsOf(tt.nodes...)); got != tt.want {
				t.Errorf("drift:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRunningImagesSumsTheNodesByReferenceAndID(t *testing.T) {
	a1, a2 := running(1, "h1", imageA), running(2, "h1", imageA)
	a2.RepoDigest = "demo@sha256:dddd"
	b := withSidecar(running(3, "h1", imageB), imageC)
	got := runningImages(groupsOf([]api.ReportedTask{a1}, []api.ReportedTask{a2, b}))
	want := []api.RunningImage{
		{Image: "demo:1", ImageID: imageA, RepoDigest: "demo@sha256:dddd", Containers: 2},
		{Image: "demo:1", ImageID: imageB, Containers: 1},
		{Image: "sidecar:1", ImageID: imageC, Containers: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("images:\n got %+v\nwant %+v", got, want)
	}
	if got := runningImages(nil); got != nil {
		t.Errorf("images of no container: %+v, want none", got)
	}
}

func TestMergeStatusImageDriftComesAndGoes(t *testing.T) {
	spec := demospec.Controller("web", "demo:1", 2, nil)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	in := mergeInput{id: "web", spec: spec, revision: 30, now: t0,
		reports: []*api.NodeReport{share("a", 2, 2, 2, 2, 30)},
		images:  groupsOf([]api.ReportedTask{running(1, "h1", imageA), running(2, "h1", imageB)})}
	st := mergeStatus(in)
	c := st.FindCondition(api.ConditionImageDrift)
	if c == nil || c.Status != "True" || c.Reason != api.ReasonImageIDsDiffer ||
		c.Message != "template h1 runs "+imageA+" in slot(s) 1 and "+imageB+" in slot(s) 2" {
		t.Fatalf("ImageDrift %+v, want True naming slots 1 and 2 and both IDs", c)
	}
	if len(st.Images) != 2 {
		t.Errorf("images %+v, want both", st.Images)
	}

	in.last, in.now = &st, t0.Add(time.Minute)
	in.images = groupsOf([]api.ReportedTask{running(1, "h2", imageB), running(2, "h2", imageB)})
	st = mergeStatus(in)
	if c := st.FindCondition(api.ConditionImageDrift); c != nil {
		t.Errorf("ImageDrift %+v after every slot runs one image, want none", c)
	}
	if want := []api.RunningImage{{Image: "demo:1", ImageID: imageB, Containers: 2}}; !slices.Equal(st.Images, want) {
		t.Errorf("images %+v, want %+v", st.Images, want)
	}
}
