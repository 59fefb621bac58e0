package api

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

const (
	s0 = pathContainers + "[0]"
	s1 = pathContainers + "[1]"
)

func manifestOf(rc *ReplicationController) *ContainerManifest {
	return &rc.DesiredState.TaskTemplate.DesiredState.Manifest
}

func TestValidateTaskGroups(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *ContainerManifest)
		opts   ValidateOptions
		want   []string // nil: valid
	}{
		{name: "the sidecar example", mutate: func(*ContainerManifest) {}},
		{name: "one container without a name", mutate: func(m *ContainerManifest) {
			m.Containers = m.Containers[:1]
			m.Containers[0].Name = ""
		}},
		{name: "no container", mutate: func(m *ContainerManifest) { m.Containers = nil; m.Volumes = nil },
			want: []string{pathContainers + ": must hold 1 to 16 containers, got 0"}},
		{name: "16 containers", mutate: func(m *ContainerManifest) { m.Containers = numbered(16) }},
		{name: "17 containers", mutate: func(m *ContainerManifest) { m.Containers = numbered(17) },
			want: []string{pathContainers + ": must hold 1 to 16 containers, got 17"}},

		// names
		{name: "a sidecar without a name", mutate: func(m *ContainerManifest) { m.Containers[1].Name = "" },
			want: []string{s1 + ".name: required in a task of several containers"}},
		{name: "the first without a name", mutate: func(m *ContainerManifest) { m.Containers[0].Name = "" },
			want: []string{s0 + ".name: required in a task of several containers"}},
		{name: "two containers of one name", mutate: func(m *ContainerManifest) { m.Containers[1].Name = "web" },
			want: []string{s1 + `.name: duplicate name "web", first used by ` + s0}},
		{name: "a name that is no DNS label", mutate: func(m *ContainerManifest) { m.Containers[1].Name = "pro.ber" },
			want: []string{s1 + ".name: must not contain dots"}},

		// volumes
		{name: "a volume without a source is an emptyDir", mutate: func(m *ContainerManifest) { m.Volumes[0].Source = nil }},
		{name: "a declared volume nobody mounts", mutate: func(m *ContainerManifest) {
			m.Volumes = append(m.Volumes, TaskVolume{Name: "spare"})
		}},
		{name: "a mount of an undeclared volume", mutate: func(m *ContainerManifest) { m.Containers[1].VolumeMounts[0].Name = "scratc" },
			want: []string{s1 + `.volumeMounts[0].name: volume "scratc" is not declared in ` + pathVolumes}},
		{name: "a mount without volumes", mutate: func(m *ContainerManifest) { m.Volumes = nil },
			want: []string{
				s0 + `.volumeMounts[0].name: volume "scratch" is not declared in ` + pathVolumes,
				s1 + `.volumeMounts[0].name: volume "scratch" is not declared in ` + pathVolumes,
			}},
		{name: "a mount without a name", mutate: func(m *ContainerManifest) { m.Containers[0].VolumeMounts[0].Name = "" },
			want: []string{s0 + ".volumeMounts[0].name: required"}},
		{name: "a duplicate volume name", mutate: func(m *ContainerManifest) {
			m.Volumes = append(m.Volumes, TaskVolume{Name: "scratch", Source: &VolumeSource{EmptyDir: &EmptyDirSource{}}})
		}, want: []string{pathVolumes + `[1].name: duplicate name "scratch", first declared by ` + pathVolumes + "[0]"}},
		{name: "a volume without a name", mutate: func(m *ContainerManifest) { m.Volumes = append(m.Volumes, TaskVolume{}) },
			want: []string{pathVolumes + "[1].name: required"}},
		{name: "a volume name that is no DNS label", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Name = "Scratch"
			m.Containers[0].VolumeMounts[0].Name = "Scratch"
			m.Containers[1].VolumeMounts[0].Name = "Scratch"
		}, want: []string{pathVolumes + "[0].name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		{name: "a source with both kinds", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Source.HostDir = &HostDirSource{Path: "/srv"}
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostMounts: true}},
			want: []string{pathVolumes + "[0].source: must set one of emptyDir and hostDir, got both"}},
		{name: "a source of neither kind", mutate: func(m *ContainerManifest) { m.Volumes[0].Source = &VolumeSource{} },
			want: []string{pathVolumes + "[0].source: must set one of emptyDir and hostDir (leave source out for an emptyDir)"}},

		// hostDir and the policy
		{name: "a hostDir without --allow-host-mounts", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Source = &VolumeSource{HostDir: &HostDirSource{Path: "/srv/data"}}
		}, want: []string{pathVolumes + "[0].source.hostDir: refused: the manager was not started with --allow-host-mounts"}},
		{name: "a hostDir with --allow-host-mounts", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Source = &VolumeSource{HostDir: &HostDirSource{Path: "/srv/data"}}
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostMounts: true}}},
		{name: "a hostDir of a relative path", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Source = &VolumeSource{HostDir: &HostDirSource{Path: "srv/data"}}
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostMounts: true}},
			want: []string{pathVolumes + `[0].source.hostDir.path: must be an absolute path, got "srv/data"`}},
		{name: "a hostDir of an unclean path", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Source = &VolumeSource{HostDir: &HostDirSource{Path: "/srv/../etc/"}}
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostMounts: true}},
			want: []string{pathVolumes + `[0].source.hostDir.path: must be a clean path ("/etc"), got "/srv/../etc/"`}},
		{name: "a hostDir without a path, refused and checked", mutate: func(m *ContainerManifest) {
			m.Volumes[0].Source = &VolumeSource{HostDir: &HostDirSource{}}
		}, want: []string{
			pathVolumes + "[0].source.hostDir: refused: the manager was not started with --allow-host-mounts",
			pathVolumes + "[0].source.hostDir.path: required",
		}},

		// mount paths
		{name: "a relative mountPath", mutate: func(m *ContainerManifest) { m.Containers[0].VolumeMounts[0].MountPath = "scratch" },
			want: []string{s0 + `.volumeMounts[0].mountPath: must be an absolute path, got "scratch"`}},
		{name: "an unclean mountPath", mutate: func(m *ContainerManifest) { m.Containers[0].VolumeMounts[0].MountPath = "/scratch/" },
			want: []string{s0 + `.volumeMounts[0].mountPath: must be a clean path ("/scratch"), got "/scratch/"`}},
		{name: "no mountPath", mutate: func(m *ContainerManifest) { m.Containers[0].VolumeMounts[0].MountPath = "" },
			want: []string{s0 + ".volumeMounts[0].mountPath: required"}},
		{name: "a mountPath of /", mutate: func(m *ContainerManifest) { m.Containers[0].VolumeMounts[0].MountPath = "/" },
			want: []string{s0 + `.volumeMounts[0].mountPath: must not be "/"`}},
		{name: "one mountPath twice in a container", mutate: func(m *ContainerManifest) {
			m.Volumes = append(m.Volumes, TaskVolume{Name: "other"})
			m.Containers[1].VolumeMounts = append(m.Containers[1].VolumeMounts, VolumeMount{Name: "other", MountPath: "/scratch"})
		}, want: []string{s1 + `.volumeMounts[1].mountPath: "/scratch" is already used by ` + s1 + ".volumeMounts[0].mountPath"}},
		{name: "a mountPath of a container's own bind mount", mutate: func(m *ContainerManifest) {
			m.Containers[0].Volumes = []Volume{{HostPath: "/srv", ContainerPath: "/scratch"}}
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostMounts: true}},
			want: []string{s0 + `.volumeMounts[0].mountPath: "/scratch" is already used by ` + s0 + ".volumes[0].containerPath"}},
		{name: "one volume at two paths of a container", mutate: func(m *ContainerManifest) {
			m.Containers[1].VolumeMounts = append(m.Containers[1].VolumeMounts, VolumeMount{Name: "scratch", MountPath: "/again"})
		}},

		// one network
		{name: "a sidecar with hostNetwork", mutate: func(m *ContainerManifest) { m.Containers[1].HostNetwork = true },
			opts: ValidateOptions{Policy: SecurityPolicy{AllowHostNetwork: true}},
			want: []string{s1 + ".hostNetwork: only the first container may set it: the others share its network"}},
		{name: "a sidecar's hostPort in the first's host network", mutate: func(m *ContainerManifest) {
			m.Containers[0].HostNetwork = true
			m.Containers[0].Ports = nil
			m.Containers[1].Ports[0].HostPort = 19090
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostNetwork: true, AllowHostPorts: true}},
			want: []string{s1 + ".ports[0].hostPort: must be 0 with hostNetwork: ports are not published on the host's network; the container listens on the host's port 9090 directly"}},
		{name: "a sidecar's hostPort", mutate: func(m *ContainerManifest) { m.Containers[1].Ports[0].HostPort = 19090 },
			opts: ValidateOptions{Policy: SecurityPolicy{AllowHostPorts: true}}},
		{name: "one port in two containers", mutate: func(m *ContainerManifest) { m.Containers[1].Ports[0].ContainerPort = 8080 },
			want: []string{s1 + ".ports[0].containerPort: port 8080/TCP is already declared by " + s0 + ".ports[0]: the containers of a task share one network"}},
		{name: "one port number over TCP and UDP", mutate: func(m *ContainerManifest) {
			m.Containers[1].Ports[0] = Port{ContainerPort: 8080, Protocol: "udp"}
		}},
		{name: "one host port from two containers", mutate: func(m *ContainerManifest) {
			m.Containers[0].Ports[0].HostPort = 18080
			m.Containers[1].Ports[0].HostPort = 18080
		}, opts: ValidateOptions{Policy: SecurityPolicy{AllowHostPorts: true}},
			want: []string{s1 + ".ports[0].hostPort: host port 18080/TCP is already published by " + s0 + ".ports[0]"}},

		// one node
		{name: "memory that overflows the sum", mutate: func(m *ContainerManifest) {
			m.Containers[0].Memory = math.MaxInt64
			m.Containers[1].Memory = math.MaxInt64
		}, want: []string{pathContainers + ": the containers' memory adds up to more than 9223372036854775807 bytes"}},
		{name: "cpu that overflows the sum", mutate: func(m *ContainerManifest) {
			m.Containers[0].CPU = math.MaxInt64
			m.Containers[1].CPU = 1
		}, want: []string{pathContainers + ": the containers' cpu shares add up to more than 9223372036854775807"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := sidecarController()
			tt.mutate(manifestOf(rc))
			err := Validate(rc, tt.opts)
			if got := fieldErrors(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// numbered returns n valid containers of distinct names: c, cx, cxx, ...
func numbered(n int) []Container {
	cs := make([]Container, n)
	for i := range cs {
		cs[i] = Container{Name: "c" + strings.Repeat("x", i), Image: "demo-task:latest"}
	}
	return cs
}

// fieldErrors returns the messages of a *ValidationError, nil for nil.
func fieldErrors(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate returned %T (%v), want *ValidationError", err, err)
	}
	var out []string
	for _, fe := range ve.Errors {
		out = append(out, fe.Error())
	}
	return out
}
