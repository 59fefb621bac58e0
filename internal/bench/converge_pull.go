package bench

// This file is the convergence of an image the engine must pull (part
// "pull", issue 27): a registry of this machine (internal/registrytest,
// on a free port of 127.0.0.1) holds an image whose layers no other image
// on the engine has (buildPullImage), and before each 0→N its reference
// is removed from the engine again. Then the manager scales a new
// controller of it 0→N (it pulls once, beside the sync, and creates), and
// the engine driven directly runs N parallel `docker run -d` of it (each
// create fails, pulls, creates again: the engine joins the pulls), in
// rounds as the convergence part.

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/replication-manager/replication-manager/internal/registrytest"
)

// The system labels of the pull part's containers.
const (
	pullManagerSystem = "pull-manager"
	pullRawSystem     = "pull-raw"
)

// PullConvergenceResult is the pull part: one sample per round and system.
type PullConvergenceResult struct {
	Replicas int `json:"replicas"`
	// Image is the reference pulled, in the registry the part started.
	Image string `json:"image"`
	ManagerVersusRaw
}

// measurePullConvergence starts the registry, pushes the part's image
// there, runs the rounds and sets res.Pull.
func (e *dockerEnv) measurePullConvergence(ctx context.Context, cfg Config, res *DockerResults) error {
	n := cfg.Replicas
	if err := e.setupPull(ctx); err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	pr := &PullConvergenceResult{Replicas: n, Image: e.pullRef}
	res.Pull = pr
	layer, err := firstLayer(ctx, e.cli, e.pullLocal)
	if err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	if err := removeImage(ctx, e.cli, e.pullLocal); err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	// before each 0→N: the engine lacks the image and every layer of it
	absent := func(ctx context.Context, _ int) error {
		if err := registrytest.RemoveRef(ctx, e.pullRef); err != nil {
			return err
		}
		return lacksLayer(ctx, e.cli, layer)
	}
	manager := e.newControllerRounds("pull/manager", pullManagerSystem, "pull", e.pullRef).system().
		into(&pr.ManagerUp, &pr.ManagerDown, &pr.ManagerCurves)
	raw := e.rawSystem("pull/raw", pullRawSystem, e.pullRef, runPulling).into(&pr.RawUp, &pr.RawDown, &pr.RawCurves)
	manager.before, raw.before = absent, absent
	fmt.Fprintf(e.progress, "pull: 0→%d of %s, pulled each round, manager and raw Docker, %d rounds\n", n, e.pullRef, cfg.Rounds)
	calls, err := e.convergeRounds(ctx, []*system{manager, raw}, cfg.Rounds, n, n)
	if err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	pr.ManagerDockerCalls = calls
	return nil
}

// setupPull starts the registry, its storage in the run's temporary
// directory, builds the part's image and pushes it. Teardown undoes each
// step that began, whatever failed.
func (e *dockerEnv) setupPull(ctx context.Context) error {
	fmt.Fprintf(e.progress, "pull: starting a registry (%s)\n", registrytest.Module)
	var err error
	if e.registry, err = registrytest.Serve(ctx, filepath.Join(e.tempDir, "registry"), registrytest.Options{}); err != nil {
		return err
	}
	e.pullLocal = e.image + "-pull"
	if err := buildPullImage(ctx, e.pullLocal, e.image, filepath.Join(e.tempDir, "pull-image")); err != nil {
		return err
	}
	e.pullRef = e.registry.Ref("rm-bench-pull:" + e.runID)
	fmt.Fprintf(e.progress, "pull: pushing %s\n", e.pullRef)
	return registrytest.PushRef(ctx, e.pullLocal, e.pullRef, "")
}
