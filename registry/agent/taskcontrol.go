package agent

import (
	"context"

	"github.com/replication-manager/replication-manager/api"
)

// TaskControlInterface is the set of side effects the manager needs from the
// container runtime, kept as an interface so that the sync can be tested
// with a fake (as in 2014). Implementations return errors wrapping
// api.ErrTaskNameConflict and api.ErrTaskNotFound where those apply.
type TaskControlInterface interface {
	// ListTasks returns every container, in any state, whose labels contain
	// every pair of selector; a value of api.AnyLabelValue matches any value
	// of its key.
	ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error)
	// InspectTask returns one container with its start and finish times.
	InspectTask(ctx context.Context, id string) (api.Task, error)
	// CheckImage returns nil when image is on the host, else an error
	// wrapping api.ErrImageNotFound; it is asked before the first create
	// of a template.
	CheckImage(ctx context.Context, image string) error
	// RepoDigests returns the digests registries know image id by
	// ("name@sha256:..."), none for an image never pushed or pulled; a
	// node asks once per image ID its containers run (imagedigests.go).
	RepoDigests(ctx context.Context, id string) ([]string, error)
	// PullImage pulls image onto the engine (with the node's credentials
	// for its registry) and returns once the engine has it, or with the
	// engine's reason why not.
	PullImage(ctx context.Context, image string) error
	// CreateTask creates and starts one container.
	CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error)
	// WaitTask waits until a container is not running and returns its
	// exit code and the last tailLines lines of its output; it is how an
	// init container is run to its end.
	WaitTask(ctx context.Context, id string, tailLines int) (api.TaskExit, error)
	// RenameTask renames a container, to move a dead one out of its slot.
	RenameTask(ctx context.Context, id, newName string) error
	// DeleteTask stops a container with a timeout and removes it. A
	// container that is already gone is not an error.
	DeleteTask(ctx context.Context, id string) error
	// CreateVolume creates a labelled named volume; one of that name with
	// every label already is returned as it is, any other gives an error
	// wrapping api.ErrVolumeNameConflict.
	CreateVolume(ctx context.Context, spec api.VolumeSpec) (api.NamedVolume, error)
	// ListVolumes returns the volumes whose labels contain every pair of
	// selector.
	ListVolumes(ctx context.Context, selector map[string]string) ([]api.NamedVolume, error)
	// RemoveVolume removes a volume whose labels contain every pair of
	// selector. One that is gone is not an error; one without them wraps
	// api.ErrVolumeNotOwned, one a container mounts api.ErrVolumeInUse.
	RemoveVolume(ctx context.Context, name string, selector map[string]string) error
	// Events streams changes to the containers that carry labelKey until
	// ctx ends or the stream breaks; the error channel then says why.
	Events(ctx context.Context, labelKey string) (<-chan api.TaskEvent, <-chan error)
}
