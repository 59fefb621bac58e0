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
	// Images are never pulled. Its text has no package prefix so that a
	// create error reads like the contract's status message:
	// "create web-1: no such image: demo-task:latest".
	ErrImageNotFound = errors.New("no such image")
)
