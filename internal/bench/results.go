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
	// Scale has one entry per controller count.
	Scale []ScaleResult `json:"scale,omitempty"`
	// Nodes is the scheduler over simulated nodes; nil when skipped.
	Nodes   *NodesResult  `json:"nodes,omitempty"`
	GoBench []GoBenchmark `json:"goBench,omitempty"`
	// Profiles are the pprof summaries of the parts that missed a target.
	Profiles []ProfileSummary `json:"profiles,omitempty"`
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
	// ManagerProvenUp is, per round, the same controller scaled 0→N again
	// after its N→0, with its template proven; ManagerProvenCurves its
	// curves. Empty without --proven-template.
	ManagerProvenUp     Durations   `json:"managerProvenUpMs,omitempty"`
	ManagerProvenCurves []Durations `json:"managerProvenCurvesMs,omitempty"`

	// Tasks is the convergence of tasks of several containers; nil when
	// not measured.
	Tasks *TaskConvergenceResult `json:"tasks,omitempty"`
	// Health is the convergence of a health-checked image; nil when not
	// measured.
	Health *HealthConvergenceResult `json:"health,omitempty"`

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

// ScaleResult is the control plane at one scale, with the in-memory fake in
// place of Docker and a real etcd; a subprocess measures it, so that its
// memory is the manager's.
type ScaleResult struct {
	Controllers int `json:"controllers"`
	Replicas    int `json:"replicas"`
	Workers     int `json:"workers"`
	// WriteSpecs is writing every spec to etcd before the manager starts.
	WriteSpecs time.Duration `json:"writeSpecsNs"`
	// Converge is from the manager's start until the fake holds every
	// replica.
	Converge time.Duration `json:"convergeNs"`
	// ConvergeStatuses is from the first spec write until every
	// controller's status says all its replicas are ready.
	ConvergeStatuses time.Duration `json:"convergeStatusesNs"`
	// Resync is a full resync of a converged manager (Synchronize: one
	// list, every controller queued) until every controller has synced.
	Resync Durations `json:"resyncMs"`
	// ResyncCall is the Synchronize call alone: the list and the queueing.
	ResyncCall Durations `json:"resyncCallMs"`
	// ColdResync is a restart with every status due for a write: the list
	// of specs and containers, then every controller synced and its status
	// written.
	ColdResync   time.Duration `json:"coldResyncNs"`
	StatusWrites int           `json:"statusWrites"`
	// EventToCreate is a new controller's spec write until the node's
	// first create call for it: the leader's decision and assignment
	// write, and the node's claim of the slot, included. EventToStatus is
	// the same write until the status in etcd, the leader's, says its
	// replica is ready.
	EventToCreate Durations `json:"eventToCreateMs"`
	EventToStatus Durations `json:"eventToStatusMs,omitempty"`
	// EventToAssignment is the same write until the leader's assignment of
	// the probe's slot reached the worker (its watch): the leader's part of
	// EventToCreate.
	EventToAssignment Durations `json:"eventToAssignmentMs,omitempty"`
	// EventToCreateBusy is EventToCreate while full resyncs run back to
	// back.
	EventToCreateBusy Durations `json:"eventToCreateBusyMs"`
	// EventToAssignmentBusy is EventToAssignment of the same probes.
	EventToAssignmentBusy Durations `json:"eventToAssignmentBusyMs,omitempty"`
	// CommitToCreate is measured from the spec write's acknowledgement,
	// which the watch event may overtake (then it is negative).
	CommitToCreate Durations `json:"commitToCreateMs"`
	// Steady is one sync period of the converged host with nothing to do.
	Steady SteadyPeriod `json:"steady"`
	// Rollout is a new template in every controller's spec at once,
	// measured at one controller count only (Config.ScaleRolloutAt).
	Rollout *ScaleRollout `json:"rollout,omitempty"`
	// Memory is measured in this worker, with the fake; BareMemory in a
	// worker of its own on a bare task control that keeps almost nothing,
	// so that its process is (almost) all manager.
	Memory     MemoryResult  `json:"memoryFake"`
	BareMemory *MemoryResult `json:"memoryBare,omitempty"`
	// Profiles maps a part (resync, events, heap) to its pprof file.
	Profiles map[string]string `json:"profiles,omitempty"`
}

// ScaleRollout is every controller of the control-plane part given a new
// template (another image) at once, with the default strategy (stop-first,
// one at a time), on a manager that has just started and synced all.
type ScaleRollout struct {
	// WriteSpecs is writing every spec with the new template.
	WriteSpecs time.Duration `json:"writeSpecsNs"`
	// Complete is from the first spec write until every controller's
	// rollout is complete: its status in etcd says
	// Progressing/RolloutComplete with updatedReplicas N, and every
	// container of the fake has its controller's new template. Done is
	// when each controller's status said so, in the order they did.
	Complete time.Duration `json:"completeNs"`
	Done     Durations     `json:"doneMs"`
	// Steps, Syncs and EventsDropped are the manager's counters over the
	// rollout; Calls the fake's task-control calls, by operation;
	// QueueDepthMax the most controllers seen waiting in the work queue.
	Steps         float64            `json:"steps"`
	Syncs         uint64             `json:"syncs"`
	EventsDropped float64            `json:"eventsDropped"`
	Calls         map[string]float64 `json:"calls,omitempty"`
	QueueDepthMax float64            `json:"queueDepthMax"`
	// EventToCreate is new controllers' spec writes until their first
	// create, written every 10ms while the rollout runs, none waiting for
	// another; EventToAssignment the same writes until the leader's
	// assignment reached the worker, in the same order.
	EventToCreate     Durations `json:"eventToCreateMs"`
	EventToAssignment Durations `json:"eventToAssignmentMs,omitempty"`
}

// MemoryResult is the resident memory of a worker whose manager has
// converged and done one full resync.
type MemoryResult struct {
	// RSS is VmRSS then; PeakRSS is VmHWM.
	RSS     uint64 `json:"rssBytes"`
	PeakRSS uint64 `json:"peakRssBytes"`
	// RSSAfterGC is VmRSS after a GC that returned free memory to the OS;
	// RSSWithoutManager is the same after the manager stopped. What the
	// task control and the etcd client hold remains in both.
	RSSAfterGC         uint64 `json:"rssAfterGcBytes"`
	RSSWithoutManager  uint64 `json:"rssWithoutManagerBytes"`
	HeapInuse          uint64 `json:"heapInuseBytes"`
	HeapWithoutManager uint64 `json:"heapWithoutManagerBytes"`
}

// ManagerRSS is the resident memory that went away with the manager. It
// underestimates the manager's share when the manager's objects shared
// pages with the task control's, which then stay resident.
func (m MemoryResult) ManagerRSS() uint64 {
	if m.RSSWithoutManager > m.RSSAfterGC {
		return 0
	}
	return m.RSSAfterGC - m.RSSWithoutManager
}

// NodesResult is the leader's scheduler (leader.NewReplicationManager) over
// simulated nodes, with a real etcd: the nodes are registrations under
// leases, with no manager and no container. A subprocess schedules; the
// parent watches every write under the registry prefix and times from the
// events it receives. The first assignment and the reassignment are taken
// on a scheduler whose SyncPeriod is IdleSyncPeriod, so that no periodic
// pass runs meanwhile; the steady state on a second scheduler started on
// the same etcd (a new leader) with SyncPeriod.
type NodesResult struct {
	Controllers int `json:"controllers"`
	Replicas    int `json:"replicas"`
	Nodes       int `json:"nodes"`
	// Reports: the simulated nodes wrote their reports (--nodes-reports).
	Reports bool `json:"reports"`
	// NodeGrace, SyncPeriod and IdleSyncPeriod are the schedulers'
	// options.
	NodeGrace      time.Duration `json:"nodeGraceNs"`
	SyncPeriod     time.Duration `json:"syncPeriodNs"`
	IdleSyncPeriod time.Duration `json:"idleSyncPeriodNs"`
	// WriteSpecs is writing every spec before the scheduler starts.
	WriteSpecs time.Duration `json:"writeSpecsNs"`

	// FirstAssignment is from the scheduler's start (specs and nodes in
	// etcd) until the watch had seen Assignments keys created, one per
	// slot; FirstKey until it saw the first (what came before the first
	// write: the lists, the decoding, the placement); SlotsPerNodeMin and
	// Max are the spread then.
	FirstAssignment time.Duration `json:"firstAssignmentNs"`
	FirstKey        time.Duration `json:"firstKeyNs"`
	Assignments     int           `json:"assignments"`
	SlotsPerNodeMin int           `json:"slotsPerNodeMin"`
	SlotsPerNodeMax int           `json:"slotsPerNodeMax"`
	// FirstPass is from the start until the first pass was over: a status
	// (and a history record) written for every controller, and again from
	// the simulated nodes' reports, the last write before the prefix went
	// quiet. ReportWrites are the report puts and deletes the simulated
	// nodes made by then.
	FirstPass    time.Duration `json:"firstPassNs"`
	ReportWrites int           `json:"reportWrites"`
	// Memory is the scheduler's process once the first pass was over
	// (RSSWithoutManager and HeapWithoutManager are not taken).
	Memory *MemoryResult `json:"memory,omitempty"`

	// Reassign is the busiest node's lease revoked on the idle scheduler.
	Reassign *NodeReassignment `json:"reassign,omitempty"`

	// RestartListed is from the second scheduler's start until its
	// mirrors were listed: the slots and the reported containers its
	// NodeStats counts were every slot.
	RestartListed time.Duration `json:"restartListedNs"`
	// SteadyWindow is the window from then, its first pass included: at
	// least SteadyPeriods sync periods, holding SteadyPasses ≥
	// SteadyPeriods ticks of the sync period (each queues every controller
	// for a decision), each followed by 90% of a period. SteadyWrites are
	// the assignment writes (puts and deletes) the watch saw in it,
	// SteadyStatusWrites the status writes, SteadyCPU the scheduler
	// process's CPU time.
	SteadyWindow       time.Duration `json:"steadyWindowNs"`
	SteadyPeriods      int           `json:"steadyPeriods"`
	SteadyPasses       int           `json:"steadyPasses"`
	SteadyWrites       int           `json:"steadyWrites"`
	SteadyStatusWrites int           `json:"steadyStatusWrites"`
	SteadyCPU          time.Duration `json:"steadyCpuNs"`
	// ReassignBusy is the busiest node's lease revoked on the second
	// scheduler after the window, while its periodic passes run.
	ReassignBusy *NodeReassignment `json:"reassignBusy,omitempty"`

	// Profiles maps a phase (first, statuses, reassign, restart, steady,
	// reassign-busy, heap) to its pprof file.
	Profiles map[string]string `json:"profiles,omitempty"`
}

// NodeReassignment is one node's lease revoked: Took is from the Revoke
// call until each of the node's Slots was put on another node, NodeGrace
// included; RevokeCall is the call, NodeKeyGone until the watch saw the
// node's key deleted. Writes are the assignment writes seen meanwhile,
// AfterMin and AfterMax the slots per live node after.
type NodeReassignment struct {
	Node        string        `json:"node"`
	Slots       int           `json:"slots"`
	Took        time.Duration `json:"tookNs"`
	RevokeCall  time.Duration `json:"revokeCallNs"`
	NodeKeyGone time.Duration `json:"nodeKeyGoneNs"`
	Writes      int           `json:"writes"`
	AfterMin    int           `json:"slotsPerNodeAfterMin"`
	AfterMax    int           `json:"slotsPerNodeAfterMax"`
}

// GoBenchmark is one line of `go test -bench -benchmem`.
type GoBenchmark struct {
	Name        string  `json:"name"`
	Iterations  int64   `json:"iterations"`
	NsPerOp     float64 `json:"nsPerOp"`
	BytesPerOp  int64   `json:"bytesPerOp"`
	AllocsPerOp int64   `json:"allocsPerOp"`
}

// ProfileSummary is the top of a pprof profile taken of a part that missed
// its target.
type ProfileSummary struct {
	Target string `json:"target"`
	File   string `json:"file"`
	Top    string `json:"top"`
}
