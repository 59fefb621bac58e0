package api

// This file holds the names of what a task is made of on a Docker engine
// (docs/CONTRACT.md, Containers and Tasks): the slot's name, which its first
// container takes, the names of the task's other containers and of its
// emptyDir volumes, and the parser that reads them back. They are pure
// functions; which names a node creates, and when, is the caller's.

import (
	"strconv"
	"strings"
)

// LabelContainer is the label that names which container of its task a
// container is: the value is the container's name in the manifest. A task
// of one container without a name carries it with an empty value.
const LabelContainer = "replicationController.container"

// MaxContainers is the most containers a task may have.
const MaxContainers = 16

// ContainerName is the name of the container at index i of the manifest's
// containers in a slot: TaskName for the first (i == 0), whatever its
// name, and <id>-<slot>.<name> for each other one.
func ContainerName(id string, slot int, m *ContainerManifest, i int) string {
	if i == 0 {
		return TaskName(id, slot)
	}
	return SidecarName(id, slot, m.Containers[i].Name)
}

// SidecarName is <id>-<slot>.<name>, the name of a container of the task
// other than the first. A container name is a DNS label and has no '.',
// so the part after the last '.' is always the container's name.
func SidecarName(id string, slot int, name string) string {
	return TaskName(id, slot) + "." + name
}

// EmptyDirVolumeName is <id>-<slot>.<volume>, the name of the Docker volume
// of an emptyDir of the task in a slot. Volumes and containers are
// separate namespaces in Docker, so a volume and a container of the same
// name do not collide.
func EmptyDirVolumeName(id string, slot int, volume string) string {
	return TaskName(id, slot) + "." + volume
}

// ParseTaskName reads the name of a container (or of an emptyDir volume)
// of controller id: <id>-<slot> gives the slot and an empty part (the
// first container), <id>-<slot>.<part> the slot and the part (another
// container's name, or a volume's). ok is false for every other name, such
// as the names a container is moved to out of its slot (<id>-dead-<short
// id>, <id>-<slot>-old-<short id>), a slot below 1, a slot written with a
// sign or leading zeros, or a part that is not a DNS label.
//
// The id must be given: an id may hold '-' and '.', so a name alone can
// read two ways ("a-1.b-2" is slot 2 of "a-1.b" and container "b-2" of
// slot 1 of "a"). The manager always knows it, from the container's
// LabelController. Even so, a name can belong to two controllers when an id
// holds '.': "a-1.b-2" is also slot 2 of controller "a-1.b". Docker lets
// only one container hold it, so the other sees a slot conflict; a caller
// must match LabelController as well as the name before it takes a
// container for one of its own.
func ParseTaskName(id, name string) (slot int, part string, ok bool) {
	rest, found := strings.CutPrefix(name, id)
	if !found || id == "" || len(rest) < 2 || rest[0] != '-' {
		return 0, "", false
	}
	digits, part, dotted := strings.Cut(rest[1:], ".")
	if dotted && !isDNSLabel(part) {
		return 0, "", false
	}
	slot, err := strconv.Atoi(digits)
	// Atoi reads "+1" and "01": neither is a name TaskName makes.
	if err != nil || slot < 1 || strconv.Itoa(slot) != digits {
		return 0, "", false
	}
	return slot, part, true
}

// isDNSLabel reports whether s is a lowercase RFC 1123 label: 1 to 63
// characters of [a-z0-9-], starting and ending with a letter or digit.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
