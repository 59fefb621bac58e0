package api

import "errors"

// Errors a task control returns, so that callers can tell them apart without
// knowing the container runtime.
var (
	// ErrTaskNameConflict means a container with the requested name exists:
	// its slot is taken.
	ErrTaskNameConflict = errors.New("task: name already in use")
	// ErrTaskNotFound means the container does not exist.
	ErrTaskNotFound = errors.New("task: not found")
	// ErrImageNotFound means a task's image is not present on the host.
	// (Under imagePullPolicy Never it stays so; otherwise the node pulls
	// it.) Its text has no package prefix so that a
	// create error reads like the contract's status message:
	// "create web-1: no such image: demo-task:latest".
	ErrImageNotFound = errors.New("no such image")
	// ErrPreStopFailed means a container's preStop failed or outlasted
	// the grace period. The container was stopped and removed all the
	// same: a task control's delete that returns it succeeded.
	ErrPreStopFailed = errors.New("preStop failed")
)

// Errors of joined networks and of volumes.
var (
	// ErrJoinTargetNotRunning means a container was to join the network
	// of a container that exists but does not run.
	ErrJoinTargetNotRunning = errors.New("task: cannot join the network of a container that is not running")
	// ErrVolumeNameConflict means a volume of the requested name exists
	// without the labels asked for: someone else's.
	ErrVolumeNameConflict = errors.New("volume: name already in use")
	// ErrVolumeNotOwned means a volume to remove lacks the labels of the
	// selector it was to be removed under, so it is left alone.
	ErrVolumeNotOwned = errors.New("volume: not ours")
	// ErrVolumeInUse means a volume is mounted by a container, in any
	// state: remove the containers first.
	ErrVolumeInUse = errors.New("volume: in use")
)
