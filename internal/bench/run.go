package bench

// This file runs the parts in order and writes what they measured: the
// Docker parts, the missing-image window last, then the teardown, the
// table and the results file. A part that fails is reported and the
// others still run; --only and the skip flags leave parts out. The control
// plane at scale is not here: it is the Go benchmarks of registry/agent
// and registry/leader (make bench).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Run measures what cfg asks for and writes the results. command is how
// the run was started, for the document. It returns an error when a part
// failed or the cleanup left something behind.
func Run(ctx context.Context, cfg Config, command string, stdout, stderr io.Writer) error {
	start := time.Now()
	res := &Results{RunID: newRunID(), Date: start, Command: command, Config: cfg}
	runDir := filepath.Join(cfg.ResultsDir, start.UTC().Format("20060102-150405")+"-"+res.RunID)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("results dir: %w", err)
	}
	logFile, err := os.Create(filepath.Join(runDir, "progress.log"))
	if err != nil {
		return fmt.Errorf("progress log: %w", err)
	}
	defer logFile.Close()
	progress := io.MultiWriter(stderr, logFile)
	fmt.Fprintf(progress, "rm-bench run %s: results in %s\n", res.RunID, runDir)
	fail := func(err error) {
		fmt.Fprintf(progress, "FAILED: %v\n", err)
		res.Errors = append(res.Errors, err.Error())
	}

	var env *dockerEnv
	var failure *failurePart
	if cfg.runsDocker() {
		env, err = setupDocker(ctx, cfg, res.RunID, runDir, &res.Machine, progress)
		if err != nil {
			fail(err)
		} else {
			res.Docker = &DockerResults{Replicas: cfg.Replicas, Rounds: cfg.Rounds, Swarm: env.swarmUnavailable}
			if err := env.measure(ctx, cfg, res.Docker); err != nil {
				fail(err)
			}
			if ctx.Err() == nil && cfg.runs(PartMissingImage) {
				if failure, err = env.startFailure(ctx, cfg.FailureReps, cfg.FailureWindow); err != nil {
					fail(err)
				}
			}
		}
	}

	if failure != nil {
		if res.Docker.Failure, err = failure.finish(ctx); err != nil {
			fail(err)
		}
	}
	if env != nil {
		fmt.Fprintln(progress, "cleaning up: services, swarm, daemon, containers, volumes, image, temp dir")
		if err := env.teardown(context.WithoutCancel(ctx)); err != nil {
			fail(fmt.Errorf("cleanup: %w", err))
		}
	}

	rows := BuildRows(res)
	res.Wall = time.Since(start)
	return errors.Join(writeOutputs(res, rows, runDir, stdout), runError(res))
}

// measure runs the Docker parts cfg asks for but the missing-image
// window; the first that fails ends it.
func (e *dockerEnv) measure(ctx context.Context, cfg Config, res *DockerResults) error {
	if cfg.runs(PartConvergence) {
		if err := e.measureConvergence(ctx, cfg, res); err != nil {
			return err
		}
	}
	if cfg.runs(PartTasks) {
		if err := e.measureTaskConvergence(ctx, cfg, res); err != nil {
			return err
		}
	}
	if cfg.runs(PartHealth) {
		if err := e.measureHealthConvergence(ctx, cfg, res); err != nil {
			return err
		}
	}
	if cfg.runs(PartPull) {
		if err := e.measurePullConvergence(ctx, cfg, res); err != nil {
			return err
		}
	}
	if cfg.runs(PartReplacement) {
		if err := e.measureDockerStart(ctx, cfg.ReplaceTries, res); err != nil {
			return err
		}
		if err := e.measureReplacement(ctx, cfg.ReplaceTries, res); err != nil {
			return err
		}
	}
	if cfg.runs(PartEndToEnd) {
		if err := e.measureEndToEnd(ctx, cfg.EndToEndTries, res); err != nil {
			return err
		}
	}
	if cfg.runs(PartRollout) {
		return e.measureRollout(ctx, cfg, res)
	}
	return nil
}

// writeOutputs prints the table and writes results.json and table.txt.
func writeOutputs(res *Results, rows []Row, runDir string, stdout io.Writer) error {
	table := RenderText(rows)
	fmt.Fprintf(stdout, "\n%s\nwall time %s; results in %s\n", table, res.Wall.Round(time.Second), runDir)

	resultsFile := filepath.Join(runDir, "results.json")
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(resultsFile, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "table.txt"), []byte(table), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// runError summarises the failed parts, already reported one by one.
func runError(res *Results) error {
	if len(res.Errors) == 0 {
		return nil
	}
	return fmt.Errorf("%d part(s) failed; see above and the results file", len(res.Errors))
}

// newRunID is a random identifier of the run, in every label and name the
// run uses.
func newRunID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("random run id: %v", err))
	}
	return hex.EncodeToString(b[:])
}
