package registry

import (
	"context"

	"github.com/replication-manager/replication-manager/api"
)

// TaskControlInterface is the smallest set of side effects the manager needs
// from the container runtime, kept as an interface so that the sync can be
// tested with a fake (as in 2014). Implementations return errors wrapping
// api.ErrTaskNameConflict and api.ErrTaskNotFound where those apply.
type TaskControlInterface interface {
	// ListTasks returns every container, in any state, whose labels contain
	// every pair of selector.
	ListTasks(ctx context.Context, selector map[string]string) ([]api.Task, error)
	// CreateTask creates and starts one container.
	CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error)
	// DeleteTask stops a container with a timeout and removes it. A
	// container that is already gone is not an error.
	DeleteTask(ctx context.Context, id string) error
}
