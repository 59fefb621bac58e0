package bench

// This file runs the parts in order, tears down what the run started and
// writes what the parts measured. A part that fails is reported; after a
// failure only the missing-image part still runs (it counts the daemon's
// calls, which what a failed part left on the engine does not change).

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

// measures are what each part measures, by name.
var measures = map[string]func(*dockerEnv, context.Context, Config, *DockerResults) error{
	PartConvergence:  (*dockerEnv).measureConvergence,
	PartTasks:        (*dockerEnv).measureTasks,
	PartHealth:       (*dockerEnv).measureHealth,
	PartPull:         (*dockerEnv).measurePull,
	PartReplacement:  (*dockerEnv).measureReplacement,
	PartEndToEnd:     (*dockerEnv).measureEndToEnd,
	PartRollout:      (*dockerEnv).measureRollout,
	PartMissingImage: (*dockerEnv).measureMissingImage,
}

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

	if env, err := setupDocker(ctx, cfg, res.RunID, runDir, &res.Machine, progress); err != nil {
		fail(err)
	} else {
		res.Docker = &DockerResults{Replicas: cfg.Replicas, Rounds: cfg.Rounds, Swarm: env.swarmUnavailable}
		failed := false
		for _, part := range Parts {
			if !cfg.runs(part) || ctx.Err() != nil || (failed && part != PartMissingImage) {
				continue
			}
			if err := measures[part](env, ctx, cfg, res.Docker); err != nil {
				fail(err)
				failed = true
			}
		}
		fmt.Fprintln(progress, "cleaning up: services, swarm, daemon, containers, volumes, images, temp dir")
		if err := env.teardown(context.WithoutCancel(ctx)); err != nil {
			fail(fmt.Errorf("cleanup: %w", err))
		}
	}

	rows := BuildRows(res)
	res.Wall = time.Since(start)
	return errors.Join(writeOutputs(res, rows, runDir, stdout), runError(res))
}

// writeOutputs prints the table and writes results.json and table.txt.
func writeOutputs(res *Results, rows []Row, runDir string, stdout io.Writer) error {
	table := RenderText(rows)
	fmt.Fprintf(stdout, "\n%s\nwall time %s; results in %s\n", table, res.Wall.Round(time.Second), runDir)
	data, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(runDir, "results.json"), append(data, '\n'), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(runDir, "table.txt"), []byte(table), 0o644)
	}
	if err != nil {
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
