package api

// This file holds the checks of what makes a task a group of containers
// (docs/CONTRACT.md, Tasks): the containers' names, the ports they share
// through the first container's network, the sum of their memory and CPU,
// the manifest's volumes and the containers' mounts of them. They are
// methods of the one validator of validation.go.

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

const pathVolumes = pathManifest + ".volumes"

// taskVolumes checks the manifest's volumes and returns the names declared,
// for the mounts to be checked against.
func (v *validator) taskVolumes(m *ContainerManifest) map[string]bool {
	v.hostDirs(m)
	declared := make(map[string]bool, len(m.Volumes))
	first := make(map[string]int, len(m.Volumes))
	for i, vol := range m.Volumes {
		f := fmt.Sprintf("%s[%d]", pathVolumes, i)
		switch {
		case vol.Name == "":
			v.add(f+".name", "required")
		case len(content.IsDNS1123Label(vol.Name)) > 0:
			for _, msg := range content.IsDNS1123Label(vol.Name) {
				v.add(f+".name", "%s", msg)
			}
		default:
			if j, dup := first[vol.Name]; dup {
				v.add(f+".name", "duplicate name %q, first declared by %s[%d]", vol.Name, pathVolumes, j)
			} else {
				first[vol.Name] = i
			}
		}
		// A volume with a bad name is declared all the same: its mounts
		// are not the problem.
		declared[vol.Name] = true
		if s := vol.Source; s != nil {
			switch {
			case s.EmptyDir != nil && s.HostDir != nil:
				v.add(f+".source", "must set one of emptyDir and hostDir, got both")
			case s.EmptyDir == nil && s.HostDir == nil:
				v.add(f+".source", "must set one of emptyDir and hostDir (leave source out for an emptyDir)")
			case s.HostDir != nil:
				v.absPath(f+".source.hostDir.path", s.HostDir.Path)
			}
		}
	}
	return declared
}

// volumeMounts checks a container's mounts of the task's volumes; field is
// the container's path, containerPaths the paths its other mounts use.
func (v *validator) volumeMounts(field string, mounts []VolumeMount, declared map[string]bool, containerPaths map[string]string) {
	for i, vm := range mounts {
		f := fmt.Sprintf("%s.volumeMounts[%d]", field, i)
		switch {
		case vm.Name == "":
			v.add(f+".name", "required")
		case !declared[vm.Name]:
			v.add(f+".name", "volume %q is not declared in %s", shorten(vm.Name), pathVolumes)
		}
		switch {
		case !v.absPath(f+".mountPath", vm.MountPath):
		case vm.MountPath == "/":
			v.add(f+".mountPath", `must not be "/"`)
		default:
			v.usePath(containerPaths, f+".mountPath", vm.MountPath)
		}
	}
}

// group checks what the containers of a task share: names that tell them
// apart, one network (a port declared once, a host port published once)
// and one node (sums of memory and CPU that can be counted).
func (v *validator) group(m *ContainerManifest) {
	if len(m.Containers) < 2 {
		return
	}
	names := make(map[string]int, len(m.Containers))
	for i, c := range m.Containers {
		f := fmt.Sprintf("%s[%d].name", pathContainers, i)
		switch j, dup := names[c.Name]; {
		case c.Name == "":
			v.add(f, "required in a task of several containers")
		case dup:
			v.add(f, "duplicate name %q, first used by %s[%d]", shorten(c.Name), pathContainers, j)
		default:
			names[c.Name] = i
		}
	}

	// The containers share the first one's network: a port is one port
	// of the task, whichever container declares it.
	type portRef struct{ container, port int }
	containerPorts := make(map[string]portRef)
	hostPorts := make(map[string]portRef)
	for i, c := range m.Containers {
		for j, p := range c.Ports {
			f := fmt.Sprintf("%s[%d].ports[%d]", pathContainers, i, j)
			proto := strings.ToUpper(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			cp := fmt.Sprintf("%d/%s", p.ContainerPort, proto)
			if first, dup := containerPorts[cp]; dup && first.container != i {
				v.add(f+".containerPort", "port %s is already declared by %s[%d].ports[%d]: the containers of a task share one network",
					cp, pathContainers, first.container, first.port)
			} else if !dup {
				containerPorts[cp] = portRef{i, j}
			}
			if p.HostPort <= 0 {
				continue
			}
			hp := fmt.Sprintf("%d/%s", p.HostPort, proto)
			if first, dup := hostPorts[hp]; dup && first.container != i {
				v.add(f+".hostPort", "host port %s is already published by %s[%d].ports[%d]", hp, pathContainers, first.container, first.port)
			} else if !dup {
				hostPorts[hp] = portRef{i, j}
			}
		}
	}

	var memory, cpu int64
	for _, c := range m.Containers {
		if c.Memory > 0 && memory > math.MaxInt64-c.Memory {
			v.add(pathContainers, "the containers' memory adds up to more than %d bytes", int64(math.MaxInt64))
			break
		}
		memory += max(c.Memory, 0)
	}
	for _, c := range m.Containers {
		if c.CPU > 0 && cpu > math.MaxInt64-c.CPU {
			v.add(pathContainers, "the containers' cpu shares add up to more than %d", int64(math.MaxInt64))
			break
		}
		cpu += max(c.CPU, 0)
	}
}
