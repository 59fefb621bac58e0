package bench

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config says what a run measures and where it writes.
type Config struct {
	// BinDir holds the replication-manager binary.
	BinDir string `json:"binDir"`
	// ResultsDir receives one directory per run: results, logs, profiles.
	ResultsDir string `json:"resultsDir"`
	// Doc is the Markdown file the table is written to.
	Doc string `json:"doc"`

	Replicas int `json:"replicas"`
	Rounds   int `json:"rounds"`
	// ProvenTemplate also times, each round, the manager's controller
	// scaled 0→N again once its template is proven.
	ProvenTemplate bool          `json:"provenTemplate"`
	ReplaceTries   int           `json:"replaceTries"`
	EndToEndTries  int           `json:"endToEndTries"`
	FailureReps    int           `json:"failureReplicas"`
	FailureWindow  time.Duration `json:"failureWindowNs"`
	Swarm          bool          `json:"swarm"`
	ScaleCounts    []int         `json:"scaleControllers"`
	ScaleReplicas  int           `json:"scaleReplicas"`
	ScaleProbes    int           `json:"scaleProbes"`
	ScaleResyncs   int           `json:"scaleResyncs"`
	// RolloutReplicas and RolloutRounds size the rolling updates;
	// ScaleRolloutAt is the controller count of the control-plane part
	// whose every controller is rolled out (0: none).
	RolloutReplicas int `json:"rolloutReplicas"`
	RolloutRounds   int `json:"rolloutRounds"`
	ScaleRolloutAt  int `json:"scaleRolloutAt"`
	// NodesControllers, NodesCount, NodesGrace, NodesSyncPeriod and
	// NodesPeriods size the nodes part: the scheduler over simulated
	// nodes (its replicas per controller are ScaleReplicas).
	NodesControllers int           `json:"nodesControllers"`
	NodesCount       int           `json:"nodesCount"`
	NodesGrace       time.Duration `json:"nodesGraceNs"`
	NodesSyncPeriod  time.Duration `json:"nodesSyncPeriodNs"`
	NodesPeriods     int           `json:"nodesPeriods"`
	// NodesReports makes the simulated nodes write the reports a node's
	// manager writes (false: registrations only, the leader alone).
	NodesReports   bool   `json:"nodesReports"`
	SkipDocker     bool   `json:"skipDocker"`
	SkipRollout    bool   `json:"skipRollout"`
	SkipScale      bool   `json:"skipScale"`
	SkipGoBench    bool   `json:"skipGoBench"`
	GoBenchPattern string `json:"goBenchPattern"`
	// Only names the parts to measure (Parts); empty measures every one
	// the skip flags leave.
	Only []string `json:"only,omitempty"`
}

// The parts of a run, as --only names them.
const (
	PartConvergence  = "convergence"
	PartTasks        = "tasks"
	PartHealth       = "health"
	PartReplacement  = "replacement"
	PartEndToEnd     = "e2e"
	PartRollout      = "rollout"
	PartMissingImage = "missing-image"
	PartScale        = "scale"
	PartNodes        = "nodes"
	PartGoBench      = "go-bench"
)

// Parts are the parts of a run in the order it measures them (the
// missing-image window runs alongside the last three).
var Parts = []string{PartConvergence, PartTasks, PartHealth, PartReplacement, PartEndToEnd, PartRollout, PartMissingImage, PartScale, PartNodes, PartGoBench}

// dockerParts are the parts that need the Docker Engine.
var dockerParts = []string{PartConvergence, PartTasks, PartHealth, PartReplacement, PartEndToEnd, PartRollout, PartMissingImage}

// runs reports whether the run measures part: --only names it (or is
// empty) and no skip flag leaves it out.
func (c *Config) runs(part string) bool {
	if len(c.Only) > 0 && !slices.Contains(c.Only, part) {
		return false
	}
	switch part {
	case PartScale, PartNodes:
		return !c.SkipScale
	case PartGoBench:
		return !c.SkipGoBench
	case PartRollout:
		return !c.SkipDocker && !c.SkipRollout
	default:
		return !c.SkipDocker
	}
}

// runsDocker reports whether any part that needs Docker runs.
func (c *Config) runsDocker() bool {
	return slices.ContainsFunc(dockerParts, c.runs)
}

// DefaultConfig is what `make bench` runs.
func DefaultConfig() Config {
	return Config{
		BinDir:           "bin",
		ResultsDir:       "bench-results",
		Doc:              "docs/BENCHMARKS.md",
		Replicas:         30,
		Rounds:           6,
		ProvenTemplate:   true,
		ReplaceTries:     10,
		EndToEndTries:    20,
		FailureReps:      100,
		FailureWindow:    time.Minute,
		Swarm:            true,
		ScaleCounts:      []int{1000, 10000},
		ScaleReplicas:    10,
		ScaleProbes:      200,
		ScaleResyncs:     5,
		RolloutReplicas:  10,
		RolloutRounds:    4,
		ScaleRolloutAt:   1000,
		NodesControllers: 10000,
		NodesCount:       100,
		NodesGrace:       100 * time.Millisecond,
		NodesSyncPeriod:  time.Second,
		NodesPeriods:     3,
		NodesReports:     true,
		GoBenchPattern:   ".",
	}
}

// AddFlags registers the options on fs.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.BinDir, "bin-dir", c.BinDir, "directory with the replication-manager binary")
	fs.StringVar(&c.ResultsDir, "results-dir", c.ResultsDir, "directory for the raw results, logs and profiles (one subdirectory per run)")
	fs.StringVar(&c.Doc, "doc", c.Doc, "Markdown file the table is written to; empty writes none")
	fs.IntVar(&c.Replicas, "replicas", c.Replicas, "N of the 0→N and N→0 convergence")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "rounds of the convergence; each round starts with the next system, so a multiple of the systems (3, or 2 without Swarm) gives each the same positions")
	fs.BoolVar(&c.ProvenTemplate, "proven-template", c.ProvenTemplate, "also time, each round, the manager's controller scaled 0→N again once its template is proven (no target)")
	fs.IntVar(&c.ReplaceTries, "replace-tries", c.ReplaceTries, "docker rm -f of a replica, how many times")
	fs.IntVar(&c.EndToEndTries, "e2e-tries", c.EndToEndTries, "new controllers of 1 replica, how many, each next to a plain create+start (at least 20, for the p99s)")
	fs.IntVar(&c.FailureReps, "failure-replicas", c.FailureReps, "replicas of the controller with a missing image")
	fs.DurationVar(&c.FailureWindow, "failure-window", c.FailureWindow, "how long the create calls for a missing image are counted")
	fs.BoolVar(&c.Swarm, "swarm", c.Swarm, "also measure Swarm mode (docker swarm init on loopback when the engine is not in a swarm)")
	fs.IntSliceVar(&c.ScaleCounts, "scale-controllers", c.ScaleCounts, "controller counts of the control-plane part (one host on the in-memory fake)")
	fs.IntVar(&c.ScaleReplicas, "scale-replicas", c.ScaleReplicas, "replicas per controller in the control-plane part")
	fs.IntVar(&c.ScaleProbes, "scale-probes", c.ScaleProbes, "spec writes timed until their first create, per controller count")
	fs.IntVar(&c.ScaleResyncs, "scale-resyncs", c.ScaleResyncs, "full resyncs timed per controller count")
	fs.IntVar(&c.RolloutReplicas, "rollout-replicas", c.RolloutReplicas, "replicas of the rolling updates (manager and Swarm)")
	fs.IntVar(&c.RolloutRounds, "rollout-rounds", c.RolloutRounds, "rounds of the rolling updates; each round rolls every strategy once on each system, the next system first, so an even number gives each the same positions")
	fs.IntVar(&c.ScaleRolloutAt, "scale-rollout-controllers", c.ScaleRolloutAt, "the controller count (one of --scale-controllers) whose every controller gets a new template in the control-plane part; 0 for none")
	fs.IntVar(&c.NodesControllers, "nodes-controllers", c.NodesControllers, "controllers of the nodes part (the scheduler over simulated nodes), of --scale-replicas each")
	fs.IntVar(&c.NodesCount, "nodes-count", c.NodesCount, "simulated nodes of the nodes part")
	fs.DurationVar(&c.NodesGrace, "nodes-grace", c.NodesGrace, "the scheduler's NodeGrace in the nodes part: how long a dead node keeps its slots (in the reassignment figure)")
	fs.DurationVar(&c.NodesSyncPeriod, "nodes-sync-period", c.NodesSyncPeriod, "the scheduler's SyncPeriod in the nodes part: every period it runs a full pass")
	fs.IntVar(&c.NodesPeriods, "nodes-periods", c.NodesPeriods, "sync periods over which the nodes part counts the assignment writes of the steady state")
	fs.BoolVar(&c.NodesReports, "nodes-reports", c.NodesReports, "the nodes part's simulated nodes write the reports a node's manager writes (slots, a running container each); false registers them only")
	fs.BoolVar(&c.SkipDocker, "skip-docker", c.SkipDocker, "skip the parts that need Docker (convergence, tasks, health-checked image, replacement, end to end, rolling updates, missing image, Swarm)")
	fs.BoolVar(&c.SkipRollout, "skip-rollout", c.SkipRollout, "skip the rolling updates on Docker (the control plane's mass rollout runs with --scale-rollout-controllers)")
	fs.StringSliceVar(&c.Only, "only", c.Only, "measure only these parts ("+strings.Join(Parts, ", ")+"); the skip flags still apply")
	fs.BoolVar(&c.SkipScale, "skip-scale", c.SkipScale, "skip the control-plane parts (scale: one host, leader and node, on the in-memory fake; nodes: the scheduler over simulated nodes)")
	fs.BoolVar(&c.SkipGoBench, "skip-go-bench", c.SkipGoBench, "skip the Go benchmarks of the registry's packages")
	fs.StringVar(&c.GoBenchPattern, "go-bench", c.GoBenchPattern, "-bench pattern of the Go benchmarks")
}

// Validate checks the options and names the flag at fault.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	positive := map[string]int{
		"--replicas": c.Replicas, "--rounds": c.Rounds, "--replace-tries": c.ReplaceTries,
		"--failure-replicas": c.FailureReps,
		"--scale-replicas":   c.ScaleReplicas, "--scale-probes": c.ScaleProbes, "--scale-resyncs": c.ScaleResyncs,
		"--rollout-replicas": c.RolloutReplicas, "--rollout-rounds": c.RolloutRounds,
		"--nodes-controllers": c.NodesControllers, "--nodes-periods": c.NodesPeriods,
	}
	for _, flag := range []string{"--replicas", "--rounds", "--replace-tries", "--failure-replicas", "--scale-replicas", "--scale-probes", "--scale-resyncs", "--rollout-replicas", "--rollout-rounds", "--nodes-controllers", "--nodes-periods"} {
		if positive[flag] < 1 {
			bad("%s: must be at least 1, got %d", flag, positive[flag])
		}
	}
	if c.EndToEndTries < minP99Samples {
		bad("--e2e-tries: must be at least %d, so that its p99 and the plain create+start's compare, got %d", minP99Samples, c.EndToEndTries)
	}
	if c.FailureWindow <= 0 {
		bad("--failure-window: must be positive, got %s", c.FailureWindow)
	}
	for _, n := range c.ScaleCounts {
		if n < 1 {
			bad("--scale-controllers: every count must be at least 1, got %d", n)
		}
	}
	if c.NodesCount < 2 {
		bad("--nodes-count: must be at least 2, so that a dead node's slots have somewhere to go, got %d", c.NodesCount)
	}
	if c.NodesGrace <= 0 {
		bad("--nodes-grace: must be positive (the scheduler takes 0 for its default), got %s", c.NodesGrace)
	}
	if c.NodesSyncPeriod <= 0 {
		bad("--nodes-sync-period: must be positive, got %s", c.NodesSyncPeriod)
	}
	if c.ScaleRolloutAt < 0 {
		bad("--scale-rollout-controllers: must not be negative, got %d", c.ScaleRolloutAt)
	}
	for _, part := range c.Only {
		if !slices.Contains(Parts, part) {
			bad("--only: no part %q; the parts are %s", part, strings.Join(Parts, ", "))
		}
	}
	if c.ResultsDir == "" {
		bad("--results-dir: must not be empty")
	}
	return errors.Join(errs...)
}
