package bench

// This file runs the control-plane part: a real embedded etcd in this
// process, and two scale-worker subprocesses per controller count (one on
// the fake for every measurement, one on bareTasks for the memory), so
// that each worker's resident memory is its host's and not etcd's. The
// fake's worker at Config.ScaleRolloutAt controllers ends with the mass
// rollout.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
)

// runScale measures every controller count of cfg in turn. The etcd data
// lives in a temporary directory that is removed at the end.
func runScale(ctx context.Context, cfg Config, runDir string, progress io.Writer) (out []ScaleResult, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("scale: find this program: %w", err)
	}
	etcd, err := startEtcd()
	if err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}
	defer func() { err = errors.Join(err, etcd.Close()) }()

	if cfg.ScaleRolloutAt > 0 && !slices.Contains(cfg.ScaleCounts, cfg.ScaleRolloutAt) {
		fmt.Fprintf(progress, "control plane: no mass rollout: --scale-rollout-controllers %d is not among --scale-controllers %v\n", cfg.ScaleRolloutAt, cfg.ScaleCounts)
	}
	for _, n := range cfg.ScaleCounts {
		res, err := runWorker(ctx, self, "fake", etcd.ClientURL, n, n == cfg.ScaleRolloutAt, cfg, runDir, progress)
		if err != nil {
			return out, err
		}
		bare, err := runWorker(ctx, self, "bare", etcd.ClientURL, n, false, cfg, runDir, progress)
		if err != nil {
			return out, err
		}
		res.BareMemory = &bare.Memory
		res.Profiles["heap-bare"] = bare.Profiles["heap"]
		out = append(out, res)
	}
	return out, nil
}

// runWorker runs one scale-worker subprocess on a fresh key prefix; with
// rollout it ends with the mass rollout.
func runWorker(ctx context.Context, self, mode, etcdURL string, n int, rollout bool, cfg Config, runDir string, progress io.Writer) (ScaleResult, error) {
	args := []string{ScaleWorkerCommand,
		"--task-control", mode,
		"--etcd", etcdURL,
		"--prefix", fmt.Sprintf("/rm-bench/scale-%s-%d", mode, n),
		"--controllers", strconv.Itoa(n),
		"--replicas", strconv.Itoa(cfg.ScaleReplicas),
		"--probes", strconv.Itoa(cfg.ScaleProbes),
		"--resyncs", strconv.Itoa(cfg.ScaleResyncs),
		"--profile-dir", runDir,
		"--rollout=" + strconv.FormatBool(rollout),
	}
	cmd := exec.CommandContext(ctx, self, args...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, progress
	var res ScaleResult
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("scale %d (%s): worker: %w", n, mode, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return res, fmt.Errorf("scale %d (%s): worker output: %w", n, mode, err)
	}
	return res, nil
}
