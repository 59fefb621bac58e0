package api

// This file turns a validated manifest into what a node creates for one
// slot (docs/CONTRACT.md, Tasks): the specs of the task's containers, in
// the order they must be created, and of its emptyDir volumes, and the
// memory and CPU the task reserves. It does no I/O and never changes the
// manifest.

import (
	"maps"
	"math"
)

// Resources are what a task asks of its node: the sums over its
// containers.
type Resources struct {
	// Memory is in bytes; 0 asks for nothing.
	Memory int64
	// CPU is in Docker CPU shares, 1024 to a CPU; 0 asks for nothing.
	CPU int64
}

// Resources returns the sums of the containers' memory and CPU shares, or
// an init container's when it asks for more (they run alone, one at a
// time), what placement reserves for one task on its node. A sum that would overflow is
// math.MaxInt64, which fits no node (Validate refuses such a manifest).
func (m *ContainerManifest) Resources() Resources {
	var r Resources
	for _, c := range m.Containers {
		r.Memory = addCapped(r.Memory, c.Memory)
		r.CPU = addCapped(r.CPU, c.CPU)
	}
	// the init containers run one at a time, before the others
	for _, c := range m.InitContainers {
		r.Memory = max(r.Memory, c.Memory)
		r.CPU = max(r.CPU, c.CPU)
	}
	return r
}

// addCapped adds two non-negative numbers, stopping at math.MaxInt64.
func addCapped(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// TaskSpecs returns the specs of the containers of the task in a slot of
// controller id, in the manifest's order, which is the order they must be
// created in: the first container is named TaskName and holds the network;
// each other one, named SidecarName, joins it. The first container
// publishes the ports of every container (in the containers' order), since
// a container that joins another's network can publish none. Every spec
// carries a copy of labels plus LabelContainer with the container's name.
// Each volume mount is resolved: an emptyDir to its Docker volume
// (EmptyDirVolumeName, labelled with labels), a hostDir to its path. A
// container's own Container.Volumes stay where they are.
//
// The manifest must be valid: a mount of an undeclared volume is skipped.
func TaskSpecs(id string, slot int, m *ContainerManifest, labels map[string]string) []TaskSpec {
	volumes := volumesByName(m)
	specs := make([]TaskSpec, len(m.Containers))
	for i, c := range m.Containers {
		spec := TaskSpec{Name: ContainerName(id, slot, m, i), Labels: maps.Clone(labels), Container: c}
		if spec.Labels == nil {
			spec.Labels = make(map[string]string)
		}
		spec.Labels[LabelContainer] = c.Name
		if i > 0 {
			spec.JoinNetwork = specs[0].Name
			spec.Container.Ports = nil
			spec.Container.HostNetwork = false
		}
		spec.Mounts = taskMounts(id, slot, c.VolumeMounts, volumes, labels)
		specs[i] = spec
	}
	if len(specs) > 1 {
		var ports []Port
		for _, c := range m.Containers {
			ports = append(ports, c.Ports...)
		}
		specs[0].Container.Ports = ports
	}
	return specs
}

// volumesByName indexes the manifest's volumes.
func volumesByName(m *ContainerManifest) map[string]TaskVolume {
	volumes := make(map[string]TaskVolume, len(m.Volumes))
	for _, v := range m.Volumes {
		volumes[v.Name] = v
	}
	return volumes
}

// taskMounts resolves a container's mounts of the task's volumes: an
// emptyDir to its Docker volume (labelled with labels), a hostDir to its
// path. A mount of an undeclared volume is skipped.
func taskMounts(id string, slot int, mounts []VolumeMount, volumes map[string]TaskVolume, labels map[string]string) []Mount {
	var out []Mount
	for _, vm := range mounts {
		v, ok := volumes[vm.Name]
		if !ok {
			continue
		}
		mount := Mount{Type: MountVolume, Source: EmptyDirVolumeName(id, slot, v.Name), Target: vm.MountPath,
			ReadOnly: vm.ReadOnly, VolumeLabels: maps.Clone(labels)}
		if v.IsHostDir() {
			mount = Mount{Type: MountBind, Source: v.Source.HostDir.Path, Target: vm.MountPath, ReadOnly: vm.ReadOnly}
		}
		out = append(out, mount)
	}
	return out
}

// EmptyDirVolumes returns the specs of the Docker volumes of the task in a
// slot: one per emptyDir of the manifest, named EmptyDirVolumeName, each
// labelled with a copy of labels. HostDirs have none.
func EmptyDirVolumes(id string, slot int, m *ContainerManifest, labels map[string]string) []VolumeSpec {
	var out []VolumeSpec
	for _, v := range m.Volumes {
		if v.IsHostDir() {
			continue
		}
		out = append(out, VolumeSpec{Name: EmptyDirVolumeName(id, slot, v.Name), Labels: maps.Clone(labels)})
	}
	return out
}
