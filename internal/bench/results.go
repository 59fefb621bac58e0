package bench

// This file holds the raw results of a run, as written to results.json:
// every sample, so that the table can be recomputed and runs compared.

import "time"

// Results is everything one run measured.
type Results struct {
	RunID   string    `json:"runId"`
	Date    time.Time `json:"date"`
	Command string    `json:"command"`
	Machine Machine   `json:"machine"`
	Config  Config    `json:"config"`
	// Docker is nil when the engine could not be set up.
	Docker *DockerResults `json:"docker,omitempty"`
	// Errors are the parts that failed; the others still report.
	Errors []string `json:"errors,omitempty"`
	// Wall is how long the whole run took, cleanup included.
	Wall time.Duration `json:"wallNs"`
}

// Machine is the hardware and software a run measured, as the engine
// sees it, so that figures from different machines are not compared by
// mistake.
type Machine struct {
	CPUs          int    `json:"cpus"`
	MemTotal      int64  `json:"memTotalBytes"`
	Kernel        string `json:"kernel"`
	OS            string `json:"os"`
	Go            string `json:"go"`
	Docker        string `json:"docker,omitempty"`
	DockerAPI     string `json:"dockerApi,omitempty"`
	StorageDriver string `json:"storageDriver,omitempty"`
}

// DockerResults are the parts, measured against the real Docker Engine.
type DockerResults struct {
	Replicas int `json:"replicas"`
	Rounds   int `json:"rounds"`
	// The convergence, and Swarm's (Swarm says why not, if not).
	ManagerVersusRaw
	SwarmUp     Durations   `json:"swarmUpMs,omitempty"`
	SwarmDown   Durations   `json:"swarmDownMs,omitempty"`
	SwarmCurves []Durations `json:"swarmCurvesMs,omitempty"`
	Swarm       string      `json:"swarm,omitempty"`

	// Tasks, Health, Pull and Failure are nil when not measured.
	Tasks  *TaskConvergenceResult   `json:"tasks,omitempty"`
	Health *HealthConvergenceResult `json:"health,omitempty"`
	Pull   *PullConvergenceResult   `json:"pull,omitempty"`

	// DockerStart is one plain create+start of the image until it runs;
	// Replacement docker rm -f of a replica until its replacement runs,
	// and ReplacementFreed until the engine destroyed the old container
	// (the sample of the same index), which frees the slot's name.
	DockerStart      Durations `json:"dockerStartMs"`
	Replacement      Durations `json:"replacementMs"`
	ReplacementFreed Durations `json:"replacementFreedMs,omitempty"`

	// EndToEnd is a new controller's spec write until its replica runs
	// (EndToEndRunning) and its status says readyReplicas 1
	// (EndToEndStatus), the later of the two; EndToEndPlain one plain
	// create+start until it runs, taken alternately, one each per try.
	EndToEnd        Durations `json:"endToEndMs"`
	EndToEndRunning Durations `json:"endToEndRunningMs"`
	EndToEndStatus  Durations `json:"endToEndStatusMs"`
	EndToEndPlain   Durations `json:"endToEndPlainMs"`

	Failure *FailureResult `json:"failure,omitempty"`

	// RolloutReplicas is the size of the rolling updates; Rollouts has one
	// entry per strategy, start-first then stop-first.
	RolloutReplicas int             `json:"rolloutReplicas,omitempty"`
	Rollouts        []RolloutResult `json:"rollouts,omitempty"`
}

// ManagerVersusRaw are the samples of a part that gives the manager a new
// controller each round against the same containers made by the engine
// driven directly (converge.go): the 0→N and N→0 of each, one per round;
// the curves, per round, when the k-th container of the 0→N started; and
// the daemon's task-control calls per round, by operation.
type ManagerVersusRaw struct {
	ManagerUp          Durations          `json:"managerUpMs"`
	ManagerDown        Durations          `json:"managerDownMs"`
	RawUp              Durations          `json:"rawUpMs"`
	RawDown            Durations          `json:"rawDownMs"`
	ManagerCurves      []Durations        `json:"managerCurvesMs"`
	RawCurves          []Durations        `json:"rawCurvesMs"`
	ManagerDockerCalls map[string]float64 `json:"managerDockerCallsPerRound,omitempty"`
}

// TaskConvergenceResult is the tasks part: N tasks (Replicas) of
// Containers containers and Volumes emptyDir volumes each, of Shape; the
// prober's HealthCheck is left out (false) on both sides.
type TaskConvergenceResult struct {
	Replicas    int    `json:"replicas"`
	Containers  int    `json:"containers"`
	Volumes     int    `json:"volumes"`
	Shape       string `json:"shape"`
	HealthCheck bool   `json:"healthCheck"`
	ManagerVersusRaw
}

// HealthConvergenceResult is the health part, of an image with
// HEALTHCHECK HealthCheck: the 0→N is until the N-th start event;
// ManagerHealthy and RawHealthy are, per round, from the same start until
// the N-th health_status: healthy event.
type HealthConvergenceResult struct {
	Replicas    int    `json:"replicas"`
	HealthCheck string `json:"healthCheck"`
	ManagerVersusRaw
	ManagerHealthy Durations `json:"managerHealthyMs"`
	RawHealthy     Durations `json:"rawHealthyMs"`
}

// PullConvergenceResult is the pull part, of Image in the registry the
// part started.
type PullConvergenceResult struct {
	Replicas int    `json:"replicas"`
	Image    string `json:"image"`
	ManagerVersusRaw
}

// RolloutResult is the rolling updates of one strategy (start-first or
// stop-first), one of each system per round (rollout.go). Manager is the
// spec write until every replica runs the new template and the status says
// RolloutComplete: the later of ManagerRunning (the N-th new container's
// start) and ManagerStatus (that status). Swarm is ServiceUpdate until
// every task runs the new image and the old ones have stopped: the later of
// SwarmRunning and the N-th old container's die; SwarmCompleted is until
// its UpdateStatus says completed. The curves are, per round, when the
// k-th new container started; ManagerCalls the daemon's task-control calls
// per rollout, by operation.
type RolloutResult struct {
	Strategy       string             `json:"strategy"`
	Manager        Durations          `json:"managerMs"`
	ManagerRunning Durations          `json:"managerRunningMs"`
	ManagerStatus  Durations          `json:"managerStatusMs"`
	Swarm          Durations          `json:"swarmMs,omitempty"`
	SwarmRunning   Durations          `json:"swarmRunningMs,omitempty"`
	SwarmCompleted Durations          `json:"swarmCompletedMs,omitempty"`
	ManagerCurves  []Durations        `json:"managerCurvesMs,omitempty"`
	SwarmCurves    []Durations        `json:"swarmCurvesMs,omitempty"`
	ManagerCalls   map[string]float64 `json:"managerCallsPerRollout,omitempty"`
}

// FailureResult is what a controller of a missing image cost over Window:
// the daemon's replication_manager_containers_total{operation="create"},
// the ReplicaFailure condition in the status at the end, and all its
// task-control calls, by operation (the image checks, the lists).
type FailureResult struct {
	Image           string             `json:"image"`
	Replicas        int                `json:"replicas"`
	Window          time.Duration      `json:"windowNs"`
	CreateErrors    int                `json:"createErrors"`
	CreateSuccesses int                `json:"createSuccesses"`
	Condition       string             `json:"condition"`
	DockerCalls     map[string]float64 `json:"dockerCalls,omitempty"`
}
