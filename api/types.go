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
}

// TaskTemplate describes the tasks a controller creates.
type TaskTemplate struct {
	Labels       map[string]string `json:"labels,omitempty"`
	DesiredState TaskState         `json:"desiredState"`
}

// TaskState is the desired state of one task.
type TaskState struct {
	Manifest ContainerManifest `json:"manifest"`
}

// ContainerManifest lists the containers of a task. Today a task is exactly
// one container.
type ContainerManifest struct {
	Version    string      `json:"version,omitempty"`
	ID         string      `json:"id,omitempty"`
	Containers []Container `json:"containers"`
}

// Container is one container of a task, in the 2014 field names.
type Container struct {
	Name       string   `json:"name,omitempty"`
	Image      string   `json:"image"`
	Command    Command  `json:"command,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	Ports      []Port   `json:"ports,omitempty"`
	Env        []EnvVar `json:"env,omitempty"`
	// Memory is the memory limit in bytes; 0 means no limit.
	Memory int64 `json:"memory,omitempty"`
	// CPU is the relative CPU shares; 0 means Docker's default.
	CPU int64 `json:"cpu,omitempty"`
}

// Port publishes a container port. HostPort 0 means the port is not
// published on the host.
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
