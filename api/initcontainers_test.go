package api

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

const i0 = pathInitContainers + "[0]"

// withInit is the sidecar example with an init container that fills the
// task's volume.
func withInit() *ReplicationController {
	rc := sidecarController()
	m := manifestOf(rc)
	m.InitContainers = []Container{{
		Name: "fill", Image: "demo-task:latest", Command: Command{"/task", "--write", "/scratch/ready"},
		VolumeMounts: []VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
	}}
	return rc
}

func TestValidateInitContainers(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *ContainerManifest)
		opts   ValidateOptions
		want   []string // nil: valid
	}{
		{name: "an init container that fills a volume", mutate: func(*ContainerManifest) {}},
		{name: "an init container with a stop signal and memory", mutate: func(m *ContainerManifest) {
			m.InitContainers[0].StopSignal, m.InitContainers[0].Memory = "SIGINT", 8<<20
		}},
		{name: "an init container with ports", mutate: func(m *ContainerManifest) {
			m.InitContainers[0].Ports = []Port{{ContainerPort: 8080}}
		}, want: []string{i0 + ".ports: must be empty: an init container publishes no ports"}},
		{name: "an init container with a health check", mutate: func(m *ContainerManifest) {
			m.InitContainers[0].HealthCheck = &HealthCheck{Test: Command{"/task", "--probe"}}
		}, want: []string{i0 + ".healthCheck: must not be set: an init container runs to its exit and is never ready"}},
		{name: "an init container without a name", mutate: func(m *ContainerManifest) { m.InitContainers[0].Name = "" },
			want: []string{i0 + ".name: required: an init container is named <id>-<slot>.init-<name>"}},
		{name: "two init containers of one name", mutate: func(m *ContainerManifest) {
			m.InitContainers = append(m.InitContainers, m.InitContainers[0])
		}, want: []string{pathInitContainers + `[1].name: duplicate name "fill", first used by ` + i0}},
		{name: "an init container of the name of a container", mutate: func(m *ContainerManifest) {
			m.InitContainers[0].Name = m.Containers[1].Name
		}},
		{name: "a container named as an init container is", mutate: func(m *ContainerManifest) {
			m.Containers[1].Name = "init-fill"
		}, want: []string{s1 + `.name: "init-fill" would be named as ` + i0 + " is (<id>-<slot>.init-fill)"}},
		{name: "a name too long for init-<name>", mutate: func(m *ContainerManifest) {
			m.InitContainers[0].Name = strings.Repeat("a", 59)
		}, want: []string{i0 + ".name: must be at most 58 characters, got 59"}},
		{name: "a name that is no DNS label", mutate: func(m *ContainerManifest) { m.InitContainers[0].Name = "Fill" },
			want: []string{i0 + ".name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		{name: "a mount of an undeclared volume", mutate: func(m *ContainerManifest) { m.InitContainers[0].VolumeMounts[0].Name = "cache" },
			want: []string{i0 + `.volumeMounts[0].name: volume "cache" is not declared in ` + pathVolumes}},
		{name: "an init container without an image", mutate: func(m *ContainerManifest) { m.InitContainers[0].Image = "" },
			want: []string{i0 + ".image: required"}},
		{name: "a privileged init container", mutate: func(m *ContainerManifest) { m.InitContainers[0].Privileged = true },
			want: []string{i0 + ".privileged: refused: the manager was not started with --allow-privileged"}},
		{name: "17 init containers", mutate: func(m *ContainerManifest) { m.InitContainers = numbered(17) },
			want: []string{pathInitContainers + ": must hold at most 16 containers, got 17"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := withInit()
			tt.mutate(manifestOf(rc))
			err := Validate(rc, tt.opts)
			if got := fieldErrors(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestInitSpecs(t *testing.T) {
	rc := withInit()
	m := manifestOf(rc)
	m.InitContainers = append(m.InitContainers, Container{Name: "migrate", Image: "demo-task:latest"})
	labels := map[string]string{LabelController: "web-probed", LabelSlot: "2"}

	specs := InitSpecs("web-probed", 2, m, labels)
	if len(specs) != 2 {
		t.Fatalf("InitSpecs: got %d specs, want 2", len(specs))
	}
	if got := []string{specs[0].Name, specs[1].Name}; !reflect.DeepEqual(got, []string{"web-probed-2.init-fill", "web-probed-2.init-migrate"}) {
		t.Errorf("names = %q, want the order of the manifest", got)
	}
	first := specs[0]
	if first.Labels[LabelContainer] != "fill" || !IsInit(first.Labels) || first.Labels[LabelController] != "web-probed" {
		t.Errorf("labels = %v, want the task's plus the container's name and %s=true", first.Labels, LabelInit)
	}
	if IsInit(labels) {
		t.Errorf("InitSpecs changed the labels it was given: %v", labels)
	}
	want := []Mount{{Type: MountVolume, Source: "web-probed-2.scratch", Target: "/scratch", VolumeLabels: labels}}
	if !reflect.DeepEqual(first.Mounts, want) {
		t.Errorf("mounts = %+v, want the task's volume %+v", first.Mounts, want)
	}
	if first.JoinNetwork != "" {
		t.Errorf("JoinNetwork = %q, want a network of its own", first.JoinNetwork)
	}
	if slot, part, ok := ParseTaskName("web-probed", first.Name); !ok || slot != 2 || part != "init-fill" {
		t.Errorf("ParseTaskName(%q) = %d, %q, %v; want slot 2, part init-fill", first.Name, slot, part, ok)
	}
	if specs := InitSpecs("web", 1, &ContainerManifest{Containers: []Container{{Image: "x"}}}, nil); specs != nil {
		t.Errorf("InitSpecs of a manifest without init containers = %v, want none", specs)
	}
}

func TestInitContainersChangeTheTemplateHash(t *testing.T) {
	rc := sidecarController()
	before := TemplateHash(&rc.DesiredState.TaskTemplate)
	if after := TemplateHash(&withInit().DesiredState.TaskTemplate); after == before {
		t.Errorf("TemplateHash with an init container = %s, the same as without: the containers would not be replaced", after)
	}
}

func TestResourcesOfInitContainers(t *testing.T) {
	m := manifestOf(withInit())
	m.Containers[0].Memory, m.Containers[1].Memory = 64<<20, 16<<20
	m.InitContainers[0].Memory = 32 << 20
	if got := m.Resources().Memory; got != 80<<20 {
		t.Errorf("memory with a smaller init container = %d, want the containers' sum %d", got, 80<<20)
	}
	m.InitContainers[0].Memory = 128 << 20
	if got := m.Resources().Memory; got != 128<<20 {
		t.Errorf("memory with a larger init container = %d, want its %d: it runs alone", got, 128<<20)
	}
}

// TestTheInitExampleIsValid: testdata/controller-init.json, the example of
// docs/SPEC.md, decodes to an init container that fills the volume the
// container's health check reads.
func TestTheInitExampleIsValid(t *testing.T) {
	data, err := os.ReadFile("testdata/controller-init.json")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := Validate(rc, ValidateOptions{Key: "web-init"}); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	inits := manifestOf(rc).InitContainers
	if len(inits) != 1 || inits[0].Name != "fill" || !reflect.DeepEqual(inits[0].Command, Command{"/task", "write", "/scratch/ready"}) {
		t.Errorf("init containers = %+v, want fill, writing /scratch/ready", inits)
	}
}
