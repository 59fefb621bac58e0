// Package taskcontrol runs tasks as containers: Docker talks to a Docker
// Engine, and Fake keeps containers in memory for unit tests and scale
// benchmarks. Both return errors wrapping api.ErrTaskNameConflict and
// api.ErrTaskNotFound where those apply.
package taskcontrol
