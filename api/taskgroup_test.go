package api

import (
	"math"
	"reflect"
	"testing"
)

func TestManifestResources(t *testing.T) {
	m := &sidecarController().DesiredState.TaskTemplate.DesiredState.Manifest
	m.Containers[0].CPU, m.Containers[1].CPU = 512, 128 // the example reserves no CPU
	if got, want := m.Resources(), (Resources{Memory: 80 << 20, CPU: 640}); got != want {
		t.Errorf("Resources of the sidecar example = %+v, want %+v", got, want)
	}
	m.Containers[1].Memory, m.Containers[1].CPU = 0, 0 // asks for nothing
	if got, want := m.Resources(), (Resources{Memory: 64 << 20, CPU: 512}); got != want {
		t.Errorf("Resources with a sidecar that sets neither = %+v, want %+v", got, want)
	}
	m.Containers[0].Memory, m.Containers[1].Memory = math.MaxInt64, 1
	if got := m.Resources().Memory; got != math.MaxInt64 {
		t.Errorf("Resources of an overflowing sum: memory %d, want math.MaxInt64", got)
	}
	if got := (&ContainerManifest{}).Resources(); got != (Resources{}) {
		t.Errorf("Resources of no container = %+v, want zero", got)
	}
}

func TestTaskSpecs(t *testing.T) {
	rc := sidecarController()
	m := manifestOf(rc)
	m.Volumes = append(m.Volumes, TaskVolume{Name: "host", Source: &VolumeSource{HostDir: &HostDirSource{Path: "/srv/data"}}})
	m.Containers[1].VolumeMounts = append(m.Containers[1].VolumeMounts, VolumeMount{Name: "host", MountPath: "/data", ReadOnly: true})
	before := sidecarController()
	manifestOf(before).Volumes, manifestOf(before).Containers[1].VolumeMounts = m.Volumes, m.Containers[1].VolumeMounts
	labels := map[string]string{LabelController: "web-probed", LabelSlot: "2", "name": "web-probed"}

	specs := TaskSpecs("web-probed", 2, m, labels)
	if len(specs) != 2 {
		t.Fatalf("TaskSpecs: got %d specs, want 2", len(specs))
	}
	first, side := specs[0], specs[1]
	if first.Name != "web-probed-2" || side.Name != "web-probed-2.prober" {
		t.Errorf("names: got %q, %q; want web-probed-2, web-probed-2.prober", first.Name, side.Name)
	}
	if first.JoinNetwork != "" || side.JoinNetwork != "web-probed-2" {
		t.Errorf("networks: first joins %q, sidecar %q; want none and web-probed-2", first.JoinNetwork, side.JoinNetwork)
	}
	wantPorts := []Port{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}, {Name: "prober", ContainerPort: 9090, Protocol: "TCP"}}
	if !reflect.DeepEqual(first.Container.Ports, wantPorts) || side.Container.Ports != nil {
		t.Errorf("ports: first %+v, sidecar %+v; want every port on the first, none on the sidecar", first.Container.Ports, side.Container.Ports)
	}
	if first.Labels[LabelContainer] != "web" || side.Labels[LabelContainer] != "prober" || side.Labels[LabelSlot] != "2" || first.Labels["name"] != "web-probed" {
		t.Errorf("labels: first %v, sidecar %v", first.Labels, side.Labels)
	}
	if _, ok := labels[LabelContainer]; ok {
		t.Errorf("TaskSpecs changed the labels it was given: %v", labels)
	}
	volLabels := map[string]string{LabelController: "web-probed", LabelSlot: "2", "name": "web-probed"}
	wantFirst := []Mount{{Type: MountVolume, Source: "web-probed-2.scratch", Target: "/scratch", VolumeLabels: volLabels}}
	wantSide := []Mount{
		{Type: MountVolume, Source: "web-probed-2.scratch", Target: "/scratch", ReadOnly: true, VolumeLabels: volLabels},
		{Type: MountBind, Source: "/srv/data", Target: "/data", ReadOnly: true},
	}
	if !reflect.DeepEqual(first.Mounts, wantFirst) || !reflect.DeepEqual(side.Mounts, wantSide) {
		t.Errorf("mounts:\n first %+v\n  want %+v\n sidecar %+v\n    want %+v", first.Mounts, wantFirst, side.Mounts, wantSide)
	}
	if first.Container.Image != "demo-task:latest" || side.Container.HealthCheck == nil {
		t.Errorf("containers not carried over: %+v, %+v", first.Container, side.Container)
	}
	if !reflect.DeepEqual(rc, before) {
		t.Errorf("TaskSpecs changed the manifest:\n got %+v\nwant %+v", rc, before)
	}
}

func TestTaskSpecsOfOneContainerAreTodays(t *testing.T) {
	m := manifestOf(webController())
	labels := map[string]string{LabelController: "web", LabelSlot: "1"}
	specs := TaskSpecs("web", 1, m, labels)
	want := TaskSpec{Name: "web-1", Container: m.Containers[0],
		Labels: map[string]string{LabelController: "web", LabelSlot: "1", LabelContainer: "web"}}
	if len(specs) != 1 || !reflect.DeepEqual(specs[0], want) {
		t.Errorf("TaskSpecs of the web example:\n got %+v\nwant [%+v]", specs, want)
	}
}

func TestEmptyDirVolumes(t *testing.T) {
	m := &ContainerManifest{Volumes: []TaskVolume{
		{Name: "a"},
		{Name: "h", Source: &VolumeSource{HostDir: &HostDirSource{Path: "/srv"}}},
		{Name: "b", Source: &VolumeSource{EmptyDir: &EmptyDirSource{}}},
	}}
	labels := map[string]string{LabelController: "web", LabelSlot: "4"}
	got := EmptyDirVolumes("web", 4, m, labels)
	want := []VolumeSpec{{Name: "web-4.a", Labels: labels}, {Name: "web-4.b", Labels: labels}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EmptyDirVolumes = %+v, want %+v", got, want)
	}
	got[0].Labels["x"] = "y"
	if _, ok := labels["x"]; ok {
		t.Error("EmptyDirVolumes shares the labels map it was given")
	}
}

func TestTemplateHashOfTaskGroups(t *testing.T) {
	template := func() *TaskTemplate { return &sidecarController().DesiredState.TaskTemplate }
	base := TemplateHash(template())

	bare := template()
	bare.DesiredState.Manifest.Volumes[0].Source = nil
	if got := TemplateHash(bare); got != base {
		t.Errorf("TemplateHash with a volume without a source = %q, want %q as with emptyDir written out", got, base)
	}
	if bare.DesiredState.Manifest.Volumes[0].Source != nil {
		t.Error("TemplateHash filled in the template's volume source")
	}
	for name, mutate := range map[string]func(*TaskTemplate){
		"a mount's readOnly": func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[0].VolumeMounts[0].ReadOnly = true },
		"a mount's path":     func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[0].VolumeMounts[0].MountPath = "/tmp" },
		"a volume's source": func(tt *TaskTemplate) {
			tt.DesiredState.Manifest.Volumes[0].Source = &VolumeSource{HostDir: &HostDirSource{Path: "/srv"}}
		},
		"the sidecar's image": func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[1].Image = "demo-task:v2" },
		"the containers' order": func(tt *TaskTemplate) {
			cs := tt.DesiredState.Manifest.Containers
			cs[0], cs[1] = cs[1], cs[0]
		},
	} {
		tt := template()
		mutate(tt)
		if TemplateHash(tt) == base {
			t.Errorf("TemplateHash unchanged after changing %s", name)
		}
	}
}
