package bench

// This file holds the raw results of a run, as written to the results file.
// Every sample is kept, so that the table can be recomputed and runs
// compared.

import (
	"time"
)

// Results is everything one run measured.
type Results struct {
	RunID   string    `json:"runId"`
	Date    time.Time `json:"date"`
	Command string    `json:"command"`
	Machine Machine   `json:"machine"`
	Config  Config    `json:"config"`
	// Docker is nil when the Docker parts were skipped.
	Docker *DockerResults `json:"docker,omitempty"`
	// Errors are the parts that failed; the others still report.
	Errors []string `json:"errors,omitempty"`
	// Wall is how long the whole run took, cleanup included.
	Wall time.Duration `json:"wallNs"`
}

// DockerResults are the parts measured against the real Docker Engine.
type DockerResults struct {
	Replicas int `json:"replicas"`
	Rounds   int `json:"rounds"`
	// 0→N and N→0 of each system, one sample per round. The manager's
	// 0→N is a new controller's first apply, its N→0 the scale to 0.
	ManagerUp   Durations `json:"managerUpMs"`
	ManagerDown Durations `json:"managerDownMs"`
	RawUp       Durations `json:"rawUpMs"`
	RawDown     Durations `json:"rawDownMs"`
	SwarmUp     Durations `json:"swarmUpMs,omitempty"`
	SwarmDown   Durations `json:"swarmDownMs,omitempty"`
	// Swarm is empty when Swarm was measured, else why not.
	Swarm string `json:"swarm,omitempty"`
	// ManagerDockerCalls are the daemon's Docker API calls per round
	// (one 0→N and one N→0), by operation, from its /metrics.
	ManagerDockerCalls map[string]float64 `json:"managerDockerCallsPerRound,omitempty"`
	// The curves are, per round, when the k-th container of the 0→N
	// started, k = 1..N.
	ManagerCurves []Durations `json:"managerCurvesMs"`
	RawCurves     []Durations `json:"rawCurvesMs"`
	SwarmCurves   []Durations `json:"swarmCurvesMs,omitempty"`

	// Tasks is the convergence of tasks of several containers; nil when
	// not measured.
	Tasks *TaskConvergenceResult `json:"tasks,omitempty"`
	// Health is the convergence of a health-checked image; nil when not
	// measured.
	Health *HealthConvergenceResult `json:"health,omitempty"`
	// Pull is the convergence of an image pulled from a registry each
	// round; nil when not measured.
	Pull *PullConvergenceResult `json:"pull,omitempty"`

	// DockerStart is one plain create+start of the image, until it runs.
	DockerStart Durations `json:"dockerStartMs"`
	// Replacement is docker rm -f of a replica until its replacement runs.
	Replacement Durations `json:"replacementMs"`

	// EndToEnd is a new controller's spec write until its replica runs and
	// its status says readyReplicas 1; the two parts are kept too.
	EndToEnd        Durations `json:"endToEndMs"`
	EndToEndRunning Durations `json:"endToEndRunningMs"`
	EndToEndStatus  Durations `json:"endToEndStatusMs"`
	// EndToEndPlain is one plain create+start of the image until it runs,
	// taken alternately with EndToEnd, one each per try.
	EndToEndPlain Durations `json:"endToEndPlainMs"`

	// Failure is the missing-image part.
	Failure *FailureResult `json:"failure,omitempty"`

	// RolloutReplicas is the size of the rolling updates; Rollouts has one
	// entry per strategy, start-first then stop-first, each with one
	// sample per round and system.
	RolloutReplicas int             `json:"rolloutReplicas,omitempty"`
	Rollouts        []RolloutResult `json:"rollouts,omitempty"`
}

// ManagerVersusRaw are the samples of a part that sets a new controller of
// the manager each round against the same containers made by the engine
// driven directly (the tasks and health parts): one per round and system.
type ManagerVersusRaw struct {
	ManagerUp   Durations `json:"managerUpMs"`
	ManagerDown Durations `json:"managerDownMs"`
	RawUp       Durations `json:"rawUpMs"`
	RawDown     Durations `json:"rawDownMs"`
	// The curves are, per round, when the k-th container of the 0→N
	// started, k = 1 to every container of the part's N.
	ManagerCurves []Durations `json:"managerCurvesMs"`
	RawCurves     []Durations `json:"rawCurvesMs"`
	// ManagerDockerCalls are the daemon's task-control calls per round
	// (one 0→N and one N→0 of a new controller, and its deletion).
	ManagerDockerCalls map[string]float64 `json:"managerDockerCallsPerRound,omitempty"`
}

// RolloutResult is the rolling updates of one strategy: N running
// replicas switched to the other image name, by the manager (a spec write)
// and by Swarm (a service update), one of each per round.
type RolloutResult struct {
	// Strategy names it: start-first or stop-first.
	Strategy string `json:"strategy"`
	// Manager is the spec write until every replica runs the new template
	// and the status says Progressing/RolloutComplete with updatedReplicas
	// N: the later of ManagerRunning (the N-th new container's start
	// event) and ManagerStatus (that status, watched in etcd).
	Manager        Durations `json:"managerMs"`
	ManagerRunning Durations `json:"managerRunningMs"`
	ManagerStatus  Durations `json:"managerStatusMs"`
	// Swarm is ServiceUpdate until every task runs the new image and the
	// old ones have stopped: the later of SwarmRunning (the N-th new
	// container's start event) and the N-th old container's die event.
	// SwarmCompleted is until the service's UpdateStatus says completed.
	Swarm          Durations `json:"swarmMs,omitempty"`
	SwarmRunning   Durations `json:"swarmRunningMs,omitempty"`
	SwarmCompleted Durations `json:"swarmCompletedMs,omitempty"`
	// The curves are, per round, when the k-th new container started.
	ManagerCurves []Durations `json:"managerCurvesMs,omitempty"`
	SwarmCurves   []Durations `json:"swarmCurvesMs,omitempty"`
	// ManagerCalls are the daemon's task-control calls per rollout, by
	// operation, from its /metrics.
	ManagerCalls map[string]float64 `json:"managerCallsPerRollout,omitempty"`
}

// FailureResult is what a controller of a missing image cost.
type FailureResult struct {
	Image    string        `json:"image"`
	Replicas int           `json:"replicas"`
	Window   time.Duration `json:"windowNs"`
	// CreateErrors and CreateSuccesses are the daemon's
	// replication_manager_containers_total{operation="create"} over the
	// window.
	CreateErrors    int `json:"createErrors"`
	CreateSuccesses int `json:"createSuccesses"`
	// Condition is the ReplicaFailure message in the status at the end.
	Condition string `json:"condition"`
	// DockerCalls are all the daemon's task-control calls over the
	// window, by operation (the image checks, the lists of a resync).
	DockerCalls map[string]float64 `json:"dockerCalls,omitempty"`
}
