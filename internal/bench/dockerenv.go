package bench

// This file sets up and tears down what the Docker parts share: the
// client, the image, the event recorder, the daemon and Swarm mode.
// Teardown removes everything the run started, found by the run's label,
// whatever state the parts left it in.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/internal/registrytest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// changeTimeout bounds the wait for one change (0→N, N→0, a replacement).
const changeTimeout = 3 * time.Minute

// dockerEnv is what the Docker parts share.
type dockerEnv struct {
	cli   *client.Client
	rec   *recorder
	runID string
	image string
	// rolloutImage is the second name of image the rolling updates
	// switch to and back; teardown removes it once it is set.
	rolloutImage string
	// healthImage is the demo task built with a HEALTHCHECK (part
	// health); teardown removes it once it is set.
	healthImage string
	// registry serves the pull part's image, pushed as pullRef from the
	// local build pullLocal; teardown stops it and removes both names
	// once they are set.
	registry           *registrytest.Registry
	pullLocal, pullRef string
	tempDir            string
	daemon             *daemon
	progress           io.Writer

	swarm *swarmMode
	// swarmUnavailable says why Swarm is not measured; empty when it is.
	swarmUnavailable string
}

// setupDocker builds the image, starts the event recorder and the daemon,
// and puts the engine in Swarm mode when asked. On error, what was set up
// is torn down again.
func setupDocker(ctx context.Context, cfg Config, runID, runDir string, machine *Machine, progress io.Writer) (env *dockerEnv, err error) {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return nil, err
	}
	env = &dockerEnv{cli: cli, runID: runID, image: "rm-bench-task:" + runID, progress: progress}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.teardown(context.WithoutCancel(ctx)))
			env = nil
		}
	}()
	if err := machine.addDocker(ctx, cli); err != nil {
		return env, err
	}
	env.tempDir, err = os.MkdirTemp("", "rm-bench-")
	if err != nil {
		return env, fmt.Errorf("temp dir: %w", err)
	}
	fmt.Fprintf(progress, "building image %s\n", env.image)
	if err := buildImage(ctx, env.image, ""); err != nil {
		return env, err
	}
	if env.rec, err = startRecorder(ctx, cli, runID, env.image); err != nil {
		return env, err
	}
	fmt.Fprintf(progress, "starting the daemon (log: %s)\n", filepath.Join(runDir, "daemon.log"))
	env.daemon, err = startDaemon(ctx, cfg.BinDir, filepath.Join(env.tempDir, "etcd"), filepath.Join(runDir, "daemon.log"))
	if err != nil {
		return env, err
	}
	switch {
	case !cfg.Swarm:
		env.swarmUnavailable = "not measured (--swarm=false)"
	case !cfg.runs(PartConvergence) && !cfg.runs(PartRollout):
		env.swarmUnavailable = "not measured (no part that compares with it runs)"
	default:
		env.swarm, env.swarmUnavailable = setupSwarm(ctx, cli)
		if env.swarmUnavailable != "" {
			fmt.Fprintf(progress, "swarm: %s\n", env.swarmUnavailable)
		}
	}
	return env, nil
}

// runLabels are the labels of a container made by system.
func (e *dockerEnv) runLabels(system string) map[string]string {
	return map[string]string{runLabel: e.runID, systemLabel: system}
}

// timeChange runs action and returns how long until n distinct containers
// accepted by match have had the event eventAction.
func (e *dockerEnv) timeChange(ctx context.Context, action func() error, eventAction string, n int, match func(dockerEvent) bool) (time.Duration, error) {
	curve, err := e.timeCurve(ctx, action, eventAction, n, match)
	if err != nil {
		return 0, err
	}
	return curve[n-1], nil
}

// timeCurve is timeChange that returns when each of the n containers had
// the event, in order: the k-th is how long until k of them had it.
func (e *dockerEnv) timeCurve(ctx context.Context, action func() error, eventAction string, n int, match func(dockerEvent) bool) (Durations, error) {
	curves, err := e.timeCurves(ctx, action, n, match, eventAction)
	if err != nil {
		return nil, err
	}
	return curves[0], nil
}

// timeCurves is timeCurve of several event actions from one start: it
// returns once n containers have had each of them, the i-th curve that of
// eventActions[i].
func (e *dockerEnv) timeCurves(ctx context.Context, action func() error, n int, match func(dockerEvent) bool, eventActions ...string) ([]Durations, error) {
	mark := e.rec.mark()
	start := time.Now()
	if err := action(); err != nil {
		return nil, err
	}
	curves := make([]Durations, len(eventActions))
	for i, eventAction := range eventActions {
		evs, err := e.rec.waitEvents(ctx, mark, eventAction, n, changeTimeout, match)
		if err != nil {
			return nil, err
		}
		curves[i] = make(Durations, n)
		for k, ev := range evs {
			curves[i][k] = ev.At.Sub(start)
		}
	}
	return curves, nil
}

// settle waits until no container with labels is left, then a second
// more, so that the engine's clean-up of one phase does not slow the next.
func (e *dockerEnv) settle(ctx context.Context, labels map[string]string) error {
	_, err := testpoll.Wait(ctx, time.Minute, func() error {
		list, err := listContainers(ctx, e.cli, labels)
		if err == nil && len(list) > 0 {
			err = fmt.Errorf("%d containers with %v still there", len(list), labels)
		}
		return err
	})
	if err != nil {
		return err
	}
	return sleepCtx(ctx, time.Second)
}

// teardown removes everything the run started: Swarm services (and the
// swarm, if the run made it), the daemon, every container with the run's
// label, every volume of the run (removeRunVolumes), the pull part's
// image (its pushed reference and digest, its local build) and registry,
// the image, its second name and the health-checked image, and the
// temporary directory with the registry's storage. It then
// checks that no container of the run is left.
func (e *dockerEnv) teardown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var errs []error
	if e.swarm != nil {
		if err := e.swarm.teardown(ctx, e.cli, e.runID); err != nil {
			errs = append(errs, err)
		}
	}
	if e.daemon != nil {
		if err := e.daemon.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeRunContainers(ctx, e.cli, e.runID); err != nil {
		errs = append(errs, err)
	}
	if err := e.settleTeardown(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := removeRunVolumes(ctx, e.cli, e.runID); err != nil {
		errs = append(errs, err)
	}
	if e.pullRef != "" {
		if err := registrytest.RemoveRef(ctx, e.pullRef); err != nil {
			errs = append(errs, err)
		}
	}
	if e.registry != nil {
		if err := e.registry.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, img := range []string{e.rolloutImage, e.pullLocal, e.image, e.healthImage} {
		if img == "" {
			continue
		}
		if err := removeImage(ctx, e.cli, img); err != nil {
			errs = append(errs, err)
		}
	}
	if e.tempDir != "" {
		if err := os.RemoveAll(e.tempDir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", e.tempDir, err))
		}
	}
	errs = append(errs, e.cli.Close())
	return errors.Join(errs...)
}

// settleTeardown waits until no container of the run is left, removing
// again what Swarm's own clean-up was still busy with.
func (e *dockerEnv) settleTeardown(ctx context.Context) error {
	_, err := testpoll.Wait(ctx, time.Minute, func() error {
		list, err := listContainers(ctx, e.cli, map[string]string{runLabel: e.runID})
		if err != nil || len(list) == 0 {
			return err
		}
		if err := removeRunContainers(ctx, e.cli, e.runID); err != nil {
			return err
		}
		return fmt.Errorf("cleanup: %d containers of run %s left behind", len(list), e.runID)
	})
	return err
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
