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
	// ResultsDir receives one directory per run: results and logs.
	ResultsDir string `json:"resultsDir"`

	Replicas        int           `json:"replicas"`
	Rounds          int           `json:"rounds"`
	ReplaceTries    int           `json:"replaceTries"`
	EndToEndTries   int           `json:"endToEndTries"`
	FailureReps     int           `json:"failureReplicas"`
	FailureWindow   time.Duration `json:"failureWindowNs"`
	Swarm           bool          `json:"swarm"`
	RolloutReplicas int           `json:"rolloutReplicas"`
	RolloutRounds   int           `json:"rolloutRounds"`
	// Only names the parts to measure (Parts); empty measures every one.
	Only []string `json:"only,omitempty"`
}

// The parts of a run, as --only names them.
const (
	PartConvergence  = "convergence"
	PartTasks        = "tasks"
	PartHealth       = "health"
	PartPull         = "pull"
	PartReplacement  = "replacement"
	PartEndToEnd     = "e2e"
	PartRollout      = "rollout"
	PartMissingImage = "missing-image"
)

// Parts are the parts of a run in the order it measures them.
var Parts = []string{PartConvergence, PartTasks, PartHealth, PartPull, PartReplacement, PartEndToEnd, PartRollout, PartMissingImage}

// runs reports whether the run measures part: --only names it, or is empty.
func (c *Config) runs(part string) bool {
	return len(c.Only) == 0 || slices.Contains(c.Only, part)
}

// DefaultConfig is what `make bench-docker` runs.
func DefaultConfig() Config {
	return Config{BinDir: "bin", ResultsDir: "bench-results", Replicas: 30, Rounds: 6, ReplaceTries: 10, EndToEndTries: 20,
		FailureReps: 100, FailureWindow: time.Minute, Swarm: true, RolloutReplicas: 10, RolloutRounds: 4}
}

// AddFlags registers the options on fs.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.BinDir, "bin-dir", c.BinDir, "directory with the replication-manager binary")
	fs.StringVar(&c.ResultsDir, "results-dir", c.ResultsDir, "directory for the raw results and logs (one subdirectory per run)")
	fs.IntVar(&c.Replicas, "replicas", c.Replicas, "N of the 0→N and N→0 convergence")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "rounds of the convergence; each round starts with the next system, so a multiple of the systems (3, or 2 without Swarm) gives each the same positions")
	fs.IntVar(&c.ReplaceTries, "replace-tries", c.ReplaceTries, "docker rm -f of a replica, how many times")
	fs.IntVar(&c.EndToEndTries, "e2e-tries", c.EndToEndTries, "new controllers of 1 replica, how many, each next to a plain create+start (at least 20, for the p99s)")
	fs.IntVar(&c.FailureReps, "failure-replicas", c.FailureReps, "replicas of the controller with a missing image")
	fs.DurationVar(&c.FailureWindow, "failure-window", c.FailureWindow, "how long the create calls for a missing image are counted")
	fs.BoolVar(&c.Swarm, "swarm", c.Swarm, "also measure Swarm mode (docker swarm init on loopback when the engine is not in a swarm)")
	fs.IntVar(&c.RolloutReplicas, "rollout-replicas", c.RolloutReplicas, "replicas of the rolling updates (manager and Swarm)")
	fs.IntVar(&c.RolloutRounds, "rollout-rounds", c.RolloutRounds, "rounds of the rolling updates; each round rolls every strategy once on each system, the next system first, so an even number gives each the same positions")
	fs.StringSliceVar(&c.Only, "only", c.Only, "measure only these parts ("+strings.Join(Parts, ", ")+")")
}

// Validate checks the options and names the flag at fault.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, f := range []struct {
		flag string
		n    int
	}{{"--replicas", c.Replicas}, {"--rounds", c.Rounds}, {"--replace-tries", c.ReplaceTries}, {"--failure-replicas", c.FailureReps},
		{"--rollout-replicas", c.RolloutReplicas}, {"--rollout-rounds", c.RolloutRounds}} {
		if f.n < 1 {
			bad("%s: must be at least 1, got %d", f.flag, f.n)
		}
	}
	if c.EndToEndTries < minP99Samples {
		bad("--e2e-tries: must be at least %d, so that its p99 and the plain create+start's compare, got %d", minP99Samples, c.EndToEndTries)
	}
	if c.FailureWindow <= 0 {
		bad("--failure-window: must be positive, got %s", c.FailureWindow)
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
