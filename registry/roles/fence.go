package roles

// This file is the fence between a node's term and its Docker engine:
// every change (create, rename, delete) first checks that the term's
// session is alive. That check and the call are two steps, so a call that
// passed the check just before the session ended still reaches Docker;
// the fence bounds the overlap with the next holder to calls already under
// way, and the slot names (one container per name, refused by Docker
// itself) keep even those from doubling a replica.

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/agent"
)

// ErrNotLeader is returned by fenced Docker calls after the term is over.
var ErrNotLeader = errors.New("election: not leader")

// fencedTasks refuses every change to Docker once the session is gone, or
// once cut is closed (the node is isolated from etcd); reads (list,
// inspect, image, events) go through.
type fencedTasks struct {
	agent.TaskControlInterface
	session *concurrency.Session
	// cut, when not nil, closes when the node stops acting before its
	// session ends.
	cut <-chan struct{}
}

func (f *fencedTasks) fenced() error {
	select {
	case <-f.session.Done():
		return ErrNotLeader
	case <-f.cut:
		return ErrNotLeader
	default:
		return nil
	}
}

func (f *fencedTasks) CreateTask(ctx context.Context, spec api.TaskSpec) (api.Task, error) {
	if err := f.fenced(); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", spec.Name, err)
	}
	return f.TaskControlInterface.CreateTask(ctx, spec)
}

func (f *fencedTasks) DeleteTask(ctx context.Context, id string) error {
	if err := f.fenced(); err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return f.TaskControlInterface.DeleteTask(ctx, id)
}

func (f *fencedTasks) RenameTask(ctx context.Context, id, newName string) error {
	if err := f.fenced(); err != nil {
		return fmt.Errorf("rename %s to %s: %w", id, newName, err)
	}
	return f.TaskControlInterface.RenameTask(ctx, id, newName)
}
