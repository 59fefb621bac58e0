package api

import "time"

// Labels the manager puts on every container it creates (the contract).
const (
	// LabelController names the owning controller (the 2014 label).
	LabelController = "replicationController"
	// LabelSlot is the replica's slot number, 1..replicas.
	LabelSlot = "replicationController.slot"
	// LabelTemplateHash is a hash of the task template the container was
	// made from.
	LabelTemplateHash = "replicationController.templateHash"
	// LabelRegistry is the id of the registry (one etcd and prefix) whose
	// manager made the container, so that several registries can share one
	// Docker host without touching each other's containers.
	LabelRegistry = "replicationController.registry"
	// LabelPreStop carries a container's preStop (Container.PreStop) as
	// JSON, from its create to its delete; absent when it has none.
	LabelPreStop = "replicationController.preStop"
)

// AnyLabelValue in a selector matches any value of its key: the label need
// only be present. It cannot be a real label value ('*' is not allowed in
// one).
const AnyLabelValue = "*"

// ReservedLabelPrefixes may not start a user label: the first is ours, the
// rest are Docker's.
var ReservedLabelPrefixes = []string{"replicationController", "com.docker.", "io.docker.", "org.dockerproject."}

// TaskState values, as Docker reports container states.
const (
	StateCreated    = "created"
	StateRunning    = "running"
	StatePaused     = "paused"
	StateRestarting = "restarting"
	StateRemoving   = "removing"
	StateExited     = "exited"
	StateDead       = "dead"
)

// Health values; HealthNone means the container has no health check.
const (
	HealthNone      = ""
	HealthStarting  = "starting"
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
)

// Task is one container as the task control reports it.
type Task struct {
	ID     string
	Name   string
	Labels map[string]string
	Image  string
	State  string
	Health string
	// HealthOutput is the output of the last health check, as an inspect
	// reports it (a list does not).
	HealthOutput string
	Created      time.Time
	// StartedAt is zero when the container never started.
	StartedAt  time.Time
	FinishedAt time.Time
	// CheckedAt is when the engine was last asked about the container and
	// answered that it runs: the time the list or inspect that said so
	// was sent. With no restart policy, a container that runs has run
	// without a break since its start, so the engine's word covers
	// StartedAt to CheckedAt (a list, which does not tell StartedAt,
	// covers its creation to CheckedAt). Zero when no answer said so;
	// events never set it.
	CheckedAt time.Time
	ExitCode  int
	// Killed says the engine was asked to kill or stop the container after
	// it last started (a kill event: docker kill, stop or rm -f). Its death
	// is then someone's doing, not a crash. Only events tell it.
	Killed bool
	// JoinedTo is the id of the container whose network namespace this
	// one joined (TaskSpec.JoinNetwork), as the engine reports it; empty
	// for a container with a network of its own.
	JoinedTo string

	// ImageID is the engine's ID of the image the container runs
	// ("sha256:..."), fixed at its create: a tag moved afterwards does
	// not change it. Empty when the task control does not know it.
	ImageID string
	// RepoDigest is the digest a registry knows ImageID by, for Image's
	// repository ("demo-task@sha256:..."); empty when the engine knows
	// none (a locally built image). Task controls leave it empty: it
	// takes an image inspect, which a node makes once per image ID.
	RepoDigest string
}

// TaskSpec is everything needed to create and start one container.
type TaskSpec struct {
	Name      string
	Labels    map[string]string
	Container Container
	// JoinNetwork, when set, is the name or id of a running container whose
	// network namespace this one joins (Docker network mode
	// container:<name>): the first container of the task, for each of the
	// others. A container that joins another's network can neither publish
	// nor expose ports (Container.Ports must be empty: the first container
	// publishes them all) nor use hostNetwork.
	JoinNetwork string
	// Mounts are mounted besides Container.Volumes: the task volumes the
	// container's VolumeMounts name, resolved to a Docker volume or a host
	// directory.
	Mounts []Mount
}

// MountType is the kind of a Mount, in Docker's words.
type MountType string

// Mount types.
const (
	// MountVolume mounts a named Docker volume (an emptyDir).
	MountVolume MountType = "volume"
	// MountBind bind-mounts a host path (a hostDir).
	MountBind MountType = "bind"
)

// Mount is one mount of a container.
type Mount struct {
	Type MountType
	// Source is the volume's name for MountVolume, the host's absolute path
	// for MountBind.
	Source string
	// Target is the absolute path in the container.
	Target   string
	ReadOnly bool
	// VolumeLabels, for MountVolume, are the labels of the volume if the
	// engine has to create it: Docker creates a missing named volume when
	// a container that mounts it is created, and a volume that carries the
	// task's labels is one its manager can find and remove again.
	VolumeLabels map[string]string
}

// VolumeSpec is what is needed to create a named Docker volume.
type VolumeSpec struct {
	Name   string
	Labels map[string]string
}

// NamedVolume is one Docker volume as the task control reports it.
type NamedVolume struct {
	Name   string
	Labels map[string]string
	// Created is zero when the engine does not say.
	Created time.Time
}

// Active reports whether the task counts towards the replicas: it is
// running, restarting or paused. A container that was created but never
// started (a manager died between create and start) is not active: it is
// replaced like an exited one.
func (t Task) Active() bool {
	switch t.State {
	case StateRunning, StateRestarting, StatePaused:
		return true
	}
	return false
}

// Ready reports whether the task is running and, where it has a health
// check, healthy.
func (t Task) Ready() bool {
	return t.State == StateRunning && (t.Health == HealthNone || t.Health == HealthHealthy)
}

// TaskEvent is one change of a container, as the engine's event stream
// tells it: the cache updates the container from it (or relists, when
// events were lost), and the owning controller is queued.
//
// An event carries what Docker's container events carry, no more: the
// fields below that the action does not tell are zero. It never carries a
// container's state as a whole: Created, StartedAt, JoinedTo and the health
// check of a container the receiver has not seen before take an inspect.
type TaskEvent struct {
	// Action is Docker's event action without its detail: create, start,
	// die, destroy, rename, pause, unpause, health_status, ...
	Action string
	ID     string
	// Labels are the container's labels (without the event's attributes).
	Labels map[string]string
	// Name is the container's name (for a rename, the new one), Image the
	// image it was made from, as given at the create.
	Name  string
	Image string
	// OldName is the name a rename replaced; empty for other actions.
	OldName string
	// Time is when the engine logged the event; zero when it does not say.
	Time time.Time
	// ExitCode is the exit code a die reports; 0 for other actions.
	ExitCode int
	// Health is the health a health_status event reports (HealthHealthy,
	// HealthUnhealthy, HealthStarting); HealthNone for other actions.
	Health string
}

// TaskExit is how a container that ran to its end ended: its exit code and
// the last lines of its output (stdout and stderr, as they came).
type TaskExit struct {
	ExitCode int
	Output   string
}
