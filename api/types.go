package api

// ReplicationController is the spec stored under
// /registry/controllers/<id>. Field names and meanings are those of the 2014
// Kubernetes API; fields added since are optional and default to the 2014
// behaviour.
type ReplicationController struct {
	ID           string                     `json:"id"`
	Labels       map[string]string          `json:"labels,omitempty"`
	DesiredState ReplicationControllerState `json:"desiredState"`
}

// ReplicationControllerState is the desired state of a controller.
type ReplicationControllerState struct {
	// Replicas is the number of tasks to keep running.
	Replicas int `json:"replicas"`
	// ReplicasInSet is the label selector: a task belongs to the set when
	// its labels contain every pair.
	ReplicasInSet map[string]string `json:"replicasInSet"`
	// MinReadySeconds is how long a task must be ready before it counts as
	// available.
	MinReadySeconds int `json:"minReadySeconds,omitempty"`
	// TaskTemplate is what each replica is made from.
	TaskTemplate TaskTemplate `json:"taskTemplate"`
	// UpdateStrategy says how containers of an older template are
	// replaced; nil is a RollingUpdate with the defaults (docs/CONTRACT.md,
	// Updates).
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`
	// Paused holds a rollout where it is; scaling still works.
	Paused bool `json:"paused,omitempty"`
	// NodeSelector limits the nodes the replicas may run on to those
	// whose labels contain every pair (docs/CONTRACT.md, Nodes); empty allows
	// every node.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
}

// TaskTemplate describes the tasks a controller creates.
type TaskTemplate struct {
	Labels       map[string]string `json:"labels,omitempty"`
	DesiredState TaskState         `json:"desiredState"`
	// RestartedAt is when `rcctl rollout restart` last asked for every
	// container to be replaced (RFC 3339): a change of it changes the
	// template's hash, and so outdates every container.
	RestartedAt string `json:"restartedAt,omitempty"`
}

// TaskState is the desired state of one task.
type TaskState struct {
	Manifest ContainerManifest `json:"manifest"`
}

// ContainerManifest lists the containers of a task and the volumes they
// share (docs/CONTRACT.md, Tasks). The first container holds the task's
// network namespace; the others join it.
type ContainerManifest struct {
	Version    string      `json:"version,omitempty"`
	ID         string      `json:"id,omitempty"`
	Containers []Container `json:"containers"`
	// InitContainers run one after another, each to a zero exit, before
	// the containers start, with the task's volumes mounted
	// (docs/CONTRACT.md, Init containers). They take the fields of
	// Containers but ports and healthCheck.
	InitContainers []Container `json:"initContainers,omitempty"`
	// Volumes are the task's volumes, which its containers mount by name
	// (Container.VolumeMounts).
	Volumes []TaskVolume `json:"volumes,omitempty"`
}

// TaskVolume is one volume of a task, named for the containers' mounts.
type TaskVolume struct {
	// Name is a DNS label, unique in the task; an emptyDir's Docker volume
	// is called after it (EmptyDirVolumeName).
	Name string `json:"name"`
	// Source says what the volume is; nil is an emptyDir.
	Source *VolumeSource `json:"source,omitempty"`
}

// VolumeSource is where a task volume comes from. Exactly one field is set.
type VolumeSource struct {
	// EmptyDir is a Docker volume of the task's own, made empty for each
	// task and removed with it.
	EmptyDir *EmptyDirSource `json:"emptyDir,omitempty"`
	// HostDir is a directory of the host, bind-mounted; Validate refuses
	// it unless the policy allows host mounts (--allow-host-mounts).
	HostDir *HostDirSource `json:"hostDir,omitempty"`
}

// EmptyDirSource is an emptyDir volume; it has no settings.
type EmptyDirSource struct{}

// HostDirSource is a host directory. It must exist: Docker does not create
// the source of a bind mount.
type HostDirSource struct {
	// Path is an absolute, clean path on the host.
	Path string `json:"path"`
}

// IsHostDir reports whether the volume is a host directory; a volume
// without a source is an emptyDir.
func (v TaskVolume) IsHostDir() bool {
	return v.Source != nil && v.Source.HostDir != nil
}

// VolumeMount mounts a task volume into one container.
type VolumeMount struct {
	// Name is the name of a volume in the manifest's volumes.
	Name string `json:"name"`
	// MountPath is an absolute, clean path in the container, not "/".
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// Container is one container of a task, in the 2014 field names.
type Container struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image"`
	// ImagePullPolicy says when the node pulls Image: PullIfNotPresent
	// (empty means it too), PullAlways or PullNever (docs/SPEC.md).
	ImagePullPolicy string   `json:"imagePullPolicy,omitempty"`
	Command         Command  `json:"command,omitempty"`
	WorkingDir      string   `json:"workingDir,omitempty"`
	Ports           []Port   `json:"ports,omitempty"`
	Env             []EnvVar `json:"env,omitempty"`
	// Memory is the memory limit in bytes; 0 means no limit.
	Memory int64 `json:"memory,omitempty"`
	// CPU is the relative CPU shares; 0 means Docker's default.
	CPU int64 `json:"cpu,omitempty"`

	// VolumeMounts mount the task's volumes (ContainerManifest.Volumes).
	VolumeMounts []VolumeMount `json:"volumeMounts,omitempty"`

	// HealthCheck replaces the image's health check; nil keeps the image's
	// (or none). A container with a health check is ready only when healthy.
	HealthCheck *HealthCheck `json:"healthCheck,omitempty"`

	// StopSignal is the signal that asks the container to stop (a name
	// such as "SIGINT"); empty means the image's STOPSIGNAL, else SIGTERM,
	// as Docker does (docs/CONTRACT.md, Stopping).
	StopSignal string `json:"stopSignal,omitempty"`
	// StopGracePeriodSeconds is how long the container gets to stop, its
	// preStop included, before it is killed (0 to
	// MaxStopGracePeriodSeconds); nil means the node's
	// --docker-stop-timeout.
	StopGracePeriodSeconds *int `json:"stopGracePeriodSeconds,omitempty"`
	// PreStop runs before the stop signal, within the grace period.
	PreStop *PreStop `json:"preStop,omitempty"`

	// The fields below weaken the container's isolation from the host.
	// Validate refuses each unless ValidateOptions.Policy allows it (the
	// daemon's --allow-* flags); all are off by default, as in 2014.

	// Privileged gives the container every capability and every device.
	Privileged bool `json:"privileged,omitempty"`
	// HostNetwork runs the container in the host's network namespace, so
	// its ports are the host's (and ports cannot be published).
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// HostPID runs the container in the host's process namespace.
	HostPID bool `json:"hostPID,omitempty"`
	// HostIPC runs the container in the host's IPC namespace.
	HostIPC bool `json:"hostIPC,omitempty"`
	// Volumes bind-mount host paths into the container.
	Volumes []Volume `json:"volumes,omitempty"`
	// Devices give the container access to host devices.
	Devices []Device `json:"devices,omitempty"`
	// CapAdd adds Linux capabilities to Docker's default set, with or
	// without the CAP_ prefix ("NET_ADMIN", "CAP_NET_ADMIN").
	CapAdd []string `json:"capAdd,omitempty"`
}

// The image pull policies of Container.ImagePullPolicy.
const (
	// PullIfNotPresent pulls the image only when the engine lacks the
	// reference; the default.
	PullIfNotPresent = "IfNotPresent"
	// PullAlways pulls before every create of a new container; running
	// ones are left alone.
	PullAlways = "Always"
	// PullNever never pulls: the image must be on the engine.
	PullNever = "Never"
)

// PullPolicy returns the container's pull policy, PullIfNotPresent when
// none is given.
func (c *Container) PullPolicy() string {
	if c.ImagePullPolicy == "" {
		return PullIfNotPresent
	}
	return c.ImagePullPolicy
}

// HealthCheck is a container health check, in Docker's terms. Zero
// durations and retries mean the image's value, else Docker's default
// (interval 30s, timeout 30s, retries 3, start period 0).
type HealthCheck struct {
	// Test is the probe: a string split on spaces or an array, as command.
	// An array starting with "CMD", "CMD-SHELL" or "NONE" is Docker's form
	// and is used as it is; anything else is a command run without a shell
	// (images built FROM scratch have none), as if "CMD" came first.
	// ["NONE"] disables the image's health check.
	Test Command `json:"test,omitempty"`
	// Interval is the time between probes.
	Interval Duration `json:"interval,omitempty"`
	// Timeout is how long one probe may take before it counts as failed.
	Timeout Duration `json:"timeout,omitempty"`
	// Retries is how many failures in a row make the container unhealthy.
	Retries int `json:"retries,omitempty"`
	// StartPeriod is how long after the start failures do not count.
	StartPeriod Duration `json:"startPeriod,omitempty"`
	// OnUnhealthy is what becomes of a task whose container Docker
	// reports unhealthy: OnUnhealthyIgnore ("", the default: it is not
	// ready, and runs on) or OnUnhealthyReplace (the leader has its node
	// replace the whole task, paced; docs/CONTRACT.md).
	OnUnhealthy string `json:"onUnhealthy,omitempty"`
}

// The values of HealthCheck.OnUnhealthy.
const (
	OnUnhealthyIgnore  = "ignore"
	OnUnhealthyReplace = "replace"
)

// ReplacesUnhealthy reports whether a task of t is replaced when one of
// its containers turns unhealthy.
func (t *TaskTemplate) ReplacesUnhealthy() bool {
	for _, c := range t.DesiredState.Manifest.Containers {
		if c.HealthCheck != nil && c.HealthCheck.OnUnhealthy == OnUnhealthyReplace {
			return true
		}
	}
	return false
}

// Health check test forms, as Docker spells them.
const (
	HealthTestCmd      = "CMD"
	HealthTestCmdShell = "CMD-SHELL"
	HealthTestNone     = "NONE"
)

// ExplicitTest returns the test in Docker's explicit form: ["NONE"],
// ["CMD-SHELL", command] or ["CMD", program, args...]. It returns a new
// slice; nil for a nil health check or an empty test.
func (h *HealthCheck) ExplicitTest() []string {
	if h == nil || len(h.Test) == 0 {
		return nil
	}
	switch h.Test[0] {
	case HealthTestCmd, HealthTestCmdShell, HealthTestNone:
		return append([]string(nil), h.Test...)
	}
	return append([]string{HealthTestCmd}, h.Test...)
}

// Disabled reports whether the health check is ["NONE"], which turns off
// the image's health check. A nil health check is not disabled: the
// image's applies.
func (h *HealthCheck) Disabled() bool {
	return h != nil && len(h.Test) > 0 && h.Test[0] == HealthTestNone
}

// Volume bind-mounts a host path (a directory or a file) into the
// container. The host path must exist: Docker does not create it.
type Volume struct {
	HostPath      string `json:"hostPath"`
	ContainerPath string `json:"containerPath"`
	ReadOnly      bool   `json:"readOnly,omitempty"`
}

// Device gives the container access to a host device.
type Device struct {
	HostPath string `json:"hostPath"`
	// ContainerPath defaults to HostPath.
	ContainerPath string `json:"containerPath,omitempty"`
	// Permissions are the cgroup permissions, a combination of "r" (read),
	// "w" (write) and "m" (mknod); they default to "rwm".
	Permissions string `json:"permissions,omitempty"`
}

// Port publishes a container port. HostPort 0 means the port is not
// published on the host. HostPort and HostIP reach outside the container,
// so Validate refuses them unless the policy allows host ports
// (--allow-host-ports).
type Port struct {
	Name          string `json:"name,omitempty"`
	HostPort      int    `json:"hostPort,omitempty"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
	HostIP        string `json:"hostIP,omitempty"`
}

// EnvVar is one environment variable. Values may be secrets: they are never
// logged or printed.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
