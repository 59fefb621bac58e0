package api

// This file holds the security policy: which container fields that weaken
// the isolation from the host a manager accepts, and the checks of those
// fields. The shape of each field (absolute paths, capability names, device
// permissions) is checked whatever the policy; the policy then refuses the
// fields the daemon was not started to allow, naming the flag that would.

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// SecurityPolicy says which security-sensitive container fields a manager
// accepts. Each is the daemon flag of the same name (AllowPrivileged is
// --allow-privileged, and so on). The zero value refuses them all.
type SecurityPolicy struct {
	// AllowPrivileged allows "privileged" (--allow-privileged).
	AllowPrivileged bool
	// AllowHostNetwork allows "hostNetwork" (--allow-host-network).
	AllowHostNetwork bool
	// AllowHostPID allows "hostPID" (--allow-host-pid).
	AllowHostPID bool
	// AllowHostIPC allows "hostIPC" (--allow-host-ipc).
	AllowHostIPC bool
	// AllowHostMounts allows host bind mounts (--allow-host-mounts): a
	// container's "volumes" and the manifest's hostDir volumes.
	AllowHostMounts bool
	// AllowDevices allows "devices" (--allow-devices).
	AllowDevices bool
	// AllowCapAdd allows "capAdd" (--allow-cap-add).
	AllowCapAdd bool
	// AllowCapAddAll allows "ALL" in "capAdd", every capability at once
	// (--allow-cap-add-all); "capAdd" itself still needs AllowCapAdd.
	AllowCapAddAll bool
	// AllowHostPorts allows "hostPort" and "hostIP" in "ports", which
	// publish a port on the host (--allow-host-ports).
	AllowHostPorts bool
}

// AllowAllPolicy allows every security-sensitive field. It is for a client
// such as the CLI, which checks a spec's shape before writing it and leaves
// the policy to the daemon that acts on it; a daemon should build its policy
// from its flags.
func AllowAllPolicy() SecurityPolicy {
	return SecurityPolicy{
		AllowPrivileged:  true,
		AllowHostNetwork: true,
		AllowHostPID:     true,
		AllowHostIPC:     true,
		AllowHostMounts:  true,
		AllowDevices:     true,
		AllowCapAdd:      true,
		AllowCapAddAll:   true,
		AllowHostPorts:   true,
	}
}

// capabilityPattern is a Linux capability name, with or without CAP_.
var capabilityPattern = regexp.MustCompile(`^[A-Z_]+$`)

// security checks the security-sensitive fields of a container: first the
// policy (one refusal per field that is set, then one per "ALL" capability
// and per published port field), then the shape. containerPaths records
// the field that first used each path in the container: two mounts (or a
// mount and a device) on one path hide one another.
func (v *validator) security(field string, c *Container, containerPaths map[string]string) {
	p := v.policy
	for _, s := range []struct {
		name    string
		set     bool
		allowed bool
		flag    string
	}{
		{"privileged", c.Privileged, p.AllowPrivileged, "--allow-privileged"},
		{"hostNetwork", c.HostNetwork, p.AllowHostNetwork, "--allow-host-network"},
		{"hostPID", c.HostPID, p.AllowHostPID, "--allow-host-pid"},
		{"hostIPC", c.HostIPC, p.AllowHostIPC, "--allow-host-ipc"},
		{"volumes", len(c.Volumes) > 0, p.AllowHostMounts, "--allow-host-mounts"},
		{"devices", len(c.Devices) > 0, p.AllowDevices, "--allow-devices"},
		{"capAdd", len(c.CapAdd) > 0, p.AllowCapAdd, "--allow-cap-add"},
	} {
		if s.set && !s.allowed {
			v.refuse(field+"."+s.name, s.flag)
		}
	}
	for i, cp := range c.CapAdd {
		if isAllCapabilities(cp) && !p.AllowCapAddAll {
			v.refuse(fmt.Sprintf("%s.capAdd[%d]", field, i), "--allow-cap-add-all")
		}
	}
	for i, port := range c.Ports {
		f := fmt.Sprintf("%s.ports[%d]", field, i)
		if port.HostPort != 0 && !p.AllowHostPorts {
			v.refuse(f+".hostPort", "--allow-host-ports")
		}
		if port.HostIP != "" && !p.AllowHostPorts {
			v.refuse(f+".hostIP", "--allow-host-ports")
		}
	}

	usePath := func(f, p string) { v.usePath(containerPaths, f, p) }
	for i, vol := range c.Volumes {
		f := fmt.Sprintf("%s.volumes[%d]", field, i)
		v.absPath(f+".hostPath", vol.HostPath)
		switch {
		case !v.absPath(f+".containerPath", vol.ContainerPath):
		case vol.ContainerPath == "/":
			v.add(f+".containerPath", `must not be "/"`)
		default:
			usePath(f+".containerPath", vol.ContainerPath)
		}
	}
	for i, dev := range c.Devices {
		f := fmt.Sprintf("%s.devices[%d]", field, i)
		hostOK := v.absPath(f+".hostPath", dev.HostPath)
		switch {
		case dev.ContainerPath == "":
			if hostOK { // the device appears at its host path
				usePath(f+".hostPath", dev.HostPath)
			}
		case v.absPath(f+".containerPath", dev.ContainerPath):
			usePath(f+".containerPath", dev.ContainerPath)
		}
		if !validPermissions(dev.Permissions) {
			v.add(f+".permissions", `must be a combination of "r", "w" and "m", each at most once, got %q`, shorten(dev.Permissions))
		}
	}
	for i, cp := range c.CapAdd {
		name := strings.TrimPrefix(cp, "CAP_")
		if name == "" || !capabilityPattern.MatchString(name) {
			v.add(fmt.Sprintf("%s.capAdd[%d]", field, i), `must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got %q`, shorten(cp))
		}
	}
}

// usePath records that field f uses the path p in a container, or reports
// that another field of the container already does.
func (v *validator) usePath(containerPaths map[string]string, f, p string) {
	if first, dup := containerPaths[p]; dup {
		v.add(f, "%q is already used by %s", shorten(p), first)
		return
	}
	containerPaths[p] = f
}

// hostDirs refuses the manifest's hostDir volumes unless the policy allows
// host mounts, as it refuses a container's own "volumes".
func (v *validator) hostDirs(m *ContainerManifest) {
	if v.policy.AllowHostMounts {
		return
	}
	for i, vol := range m.Volumes {
		if vol.IsHostDir() {
			v.refuse(fmt.Sprintf("%s.volumes[%d].source.hostDir", pathManifest, i), "--allow-host-mounts")
		}
	}
}

// refuse reports a field that the policy does not allow, naming the daemon
// flag that would.
func (v *validator) refuse(field, flag string) {
	v.add(field, "refused: the manager was not started with %s", flag)
}

// isAllCapabilities reports whether a capAdd entry is Docker's "ALL", every
// capability at once, in any case and with or without "CAP_": Docker reads
// names case-insensitively, and a spelling that slipped past the shape
// check must not slip past the policy.
func isAllCapabilities(cp string) bool {
	return strings.EqualFold(cp, "ALL") || strings.EqualFold(cp, "CAP_ALL")
}

// absPath checks that p is an absolute, clean path and reports whether it
// is.
func (v *validator) absPath(field, p string) bool {
	switch {
	case p == "":
		v.add(field, "required")
	case !path.IsAbs(p):
		v.add(field, "must be an absolute path, got %q", shorten(p))
	case path.Clean(p) != p:
		v.add(field, "must be a clean path (%q), got %q", shorten(path.Clean(p)), shorten(p))
	default:
		return true
	}
	return false
}

// validPermissions reports whether perm is empty (the default, "rwm") or
// a combination of r, w and m, each at most once.
func validPermissions(perm string) bool {
	seen := make(map[rune]bool)
	for _, r := range perm {
		if !strings.ContainsRune("rwm", r) || seen[r] {
			return false
		}
		seen[r] = true
	}
	return true
}
