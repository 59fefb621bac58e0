package api

// This file holds what makes an init container (docs/CONTRACT.md, Init
// containers): its name and label, the specs a node creates for a slot's
// init containers, and their checks, a method of the one validator of
// validation.go. Which init container runs when is the node's.

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// LabelInit marks an init container, with the value "true": it runs
// before its task's containers and is never one of them, so it is never
// counted.
const LabelInit = "replicationController.init"

// initPrefix starts the part of an init container's name after the slot.
const initPrefix = "init-"

// MaxInitContainerNameLength is the longest name of an init container, so
// that init-<name> is a DNS label.
const MaxInitContainerNameLength = 63 - len(initPrefix)

const pathInitContainers = pathManifest + ".initContainers"

// InitContainerName is <id>-<slot>.init-<name>, the name of the init
// container name of the task in a slot.
func InitContainerName(id string, slot int, name string) string {
	return TaskName(id, slot) + "." + initPrefix + name
}

// IsInit reports whether labels are those of an init container.
func IsInit(labels map[string]string) bool {
	return labels[LabelInit] == "true"
}

// InitSpecs returns the specs of the init containers of the task in a slot
// of controller id, in the order they run: each named InitContainerName,
// labelled with a copy of labels plus LabelContainer (its name) and
// LabelInit, with the task's volumes mounted as TaskSpecs mounts them. An
// init container has a network of its own (the task's first container,
// which holds the task's, does not exist yet) and publishes no ports.
func InitSpecs(id string, slot int, m *ContainerManifest, labels map[string]string) []TaskSpec {
	if len(m.InitContainers) == 0 {
		return nil
	}
	volumes := volumesByName(m)
	specs := make([]TaskSpec, len(m.InitContainers))
	for i, c := range m.InitContainers {
		spec := TaskSpec{Name: InitContainerName(id, slot, c.Name), Labels: maps.Clone(labels), Container: c}
		if spec.Labels == nil {
			spec.Labels = make(map[string]string)
		}
		spec.Labels[LabelContainer] = c.Name
		spec.Labels[LabelInit] = "true"
		spec.Container.Ports = nil
		spec.Container.HealthCheck = nil
		spec.Mounts = taskMounts(id, slot, c.VolumeMounts, volumes, labels)
		specs[i] = spec
	}
	return specs
}

// initContainers checks the manifest's init containers: the fields of a
// container, a name that tells them apart (and from the containers'), no
// ports and no health check.
func (v *validator) initContainers(m *ContainerManifest, declared map[string]bool) {
	if len(m.InitContainers) > MaxContainers {
		v.add(pathInitContainers, "must hold at most %d containers, got %d", MaxContainers, len(m.InitContainers))
	}
	containers := make(map[string]int, len(m.Containers))
	for i, c := range m.Containers {
		containers[c.Name] = i
	}
	names := make(map[string]int, len(m.InitContainers))
	for i := range m.InitContainers {
		c := &m.InitContainers[i]
		field := fmt.Sprintf("%s[%d]", pathInitContainers, i)
		switch j, dup := names[c.Name]; {
		case c.Name == "":
			v.add(field+".name", "required: an init container is named <id>-<slot>.init-<name>")
		case len(content.IsDNS1123Label(c.Name)) > 0:
			// the container's own checks say why
		case len(c.Name) > MaxInitContainerNameLength:
			v.add(field+".name", "must be at most %d characters, got %d", MaxInitContainerNameLength, len(c.Name))
		case dup:
			v.add(field+".name", "duplicate name %q, first used by %s[%d]", shorten(c.Name), pathInitContainers, j)
		default:
			names[c.Name] = i
			if k, clash := containers[initPrefix+c.Name]; clash && k > 0 {
				v.add(fmt.Sprintf("%s[%d].name", pathContainers, k), "%q would be named as %s[%d] is (<id>-<slot>.%s)",
					shorten(initPrefix+c.Name), pathInitContainers, i, shorten(initPrefix+c.Name))
			}
		}
		if len(c.Ports) > 0 {
			v.add(field+".ports", "must be empty: an init container publishes no ports")
		}
		if c.HealthCheck != nil {
			v.add(field+".healthCheck", "must not be set: an init container runs to its exit and is never ready")
		}
		v.container(field, c, c.HostNetwork, declared)
	}
}
