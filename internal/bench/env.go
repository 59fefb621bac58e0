package bench

// This file sets up and tears down what the parts share: the client, the
// image, the event recorder, the daemon and Swarm mode, and times a change
// by the engine's events. Teardown removes everything the run started,
// found by the run's label, whatever state the parts left it in.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/registrytest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

const (
	// runLabel is on every container, volume and service of a run; its
	// value is the run's id, so that cleanup finds exactly what this run
	// started.
	runLabel = "rm-bench.run"
	// systemLabel says which system (and part) made a container.
	systemLabel = "rm-bench.system"
	// changeTimeout bounds the wait for one change (0→N, N→0, a
	// replacement, a rolling update).
	changeTimeout = 3 * time.Minute
)

// dockerEnv is what the parts share.
type dockerEnv struct {
	cli   *client.Client
	rec   *recorder
	runID string
	image string
	// extraImages are the images the parts made (the health-checked
	// image, the rolling updates' second name, the pull part's build), set
	// before they are made, so that teardown removes them.
	extraImages []string
	// registry serves the pull part's image, pushed as pullRef; teardown
	// stops it and removes pullRef once they are set.
	registry *registrytest.Registry
	pullRef  string
	tempDir  string
	daemon   *daemon
	progress io.Writer

	swarm *swarmMode
	// swarmUnavailable says why Swarm is not measured; empty when it is.
	swarmUnavailable string
}

// setupDocker describes the machine, builds the image, starts the event
// recorder and the daemon, and puts the engine in Swarm mode when asked.
// On error, what was set up is torn down again.
func setupDocker(ctx context.Context, cfg Config, runID, runDir string, machine *Machine, progress io.Writer) (env *dockerEnv, err error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: no engine answers: %w", err)
	}
	env = &dockerEnv{cli: cli, runID: runID, image: "rm-bench-task:" + runID, progress: progress}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.teardown(context.WithoutCancel(ctx)))
			env = nil
		}
	}()
	info, err := cli.Info(ctx)
	if err != nil {
		return env, fmt.Errorf("docker info: %w", err)
	}
	*machine = Machine{CPUs: info.NCPU, MemTotal: info.MemTotal, Kernel: info.KernelVersion, OS: info.OperatingSystem,
		Go: runtime.Version(), Docker: v.Version, DockerAPI: v.APIVersion, StorageDriver: info.Driver}
	if env.tempDir, err = os.MkdirTemp("", "rm-bench-"); err != nil {
		return env, fmt.Errorf("temp dir: %w", err)
	}
	if err := env.buildImage(ctx, env.image, ""); err != nil {
		return env, err
	}
	if env.rec, err = startRecorder(ctx, cli, runID, env.image); err != nil {
		return env, err
	}
	fmt.Fprintf(progress, "starting the daemon (log: %s)\n", filepath.Join(runDir, "daemon.log"))
	if env.daemon, err = startDaemon(ctx, cfg.BinDir, filepath.Join(env.tempDir, "etcd"), filepath.Join(runDir, "daemon.log")); err != nil {
		return env, err
	}
	switch {
	case !cfg.Swarm:
		env.swarmUnavailable = "not measured (--swarm=false)"
	case !cfg.runs(PartConvergence) && !cfg.runs(PartRollout):
		env.swarmUnavailable = "not measured (no part that compares with it runs)"
	default:
		if env.swarm, env.swarmUnavailable = setupSwarm(ctx, cli); env.swarmUnavailable != "" {
			fmt.Fprintf(progress, "swarm: %s\n", env.swarmUnavailable)
		}
	}
	return env, nil
}

// buildImage builds the demo task as tag with scripts/build-image.sh.
func (e *dockerEnv) buildImage(ctx context.Context, tag, healthcheck string) error {
	fmt.Fprintf(e.progress, "building image %s\n", tag)
	return dockertest.BuildImage(ctx, buildImageArgs(tag, healthcheck)...)
}

// buildImageArgs are build-image.sh's arguments for the demo task as tag
// with the HEALTHCHECK arguments healthcheck; without any (""), the image
// has none, so that a container is ready as soon as it runs and no health
// probes load the engine while it is measured: the image of every part but
// health.
func buildImageArgs(tag, healthcheck string) []string {
	if healthcheck == "" {
		return []string{"--cmd", "demo-task", "--bin-name", "task", "--no-healthcheck", tag}
	}
	return []string{"--cmd", "demo-task", "--bin-name", "task", "--healthcheck", healthcheck, tag}
}

// runLabels are the labels of a container made by system.
func (e *dockerEnv) runLabels(system string) map[string]string {
	return map[string]string{runLabel: e.runID, systemLabel: system}
}

// timeCurves runs action and returns, for each of eventActions, when each
// of n distinct containers accepted by match had it, from start, just
// before action: the k-th point is how long until k of them had.
func (e *dockerEnv) timeCurves(ctx context.Context, action func() error, n int, match func(dockerEvent) bool, eventActions ...string) (curves []Durations, start time.Time, err error) {
	mark := e.rec.mark()
	start = time.Now()
	if err := action(); err != nil {
		return nil, start, err
	}
	for _, eventAction := range eventActions {
		evs, err := e.rec.waitEvents(ctx, mark, eventAction, n, match)
		if err != nil {
			return nil, start, err
		}
		curve := make(Durations, n)
		for k, ev := range evs {
			curve[k] = ev.At.Sub(start)
		}
		curves = append(curves, curve)
	}
	return curves, start, nil
}

// timeChange is how long until the n-th container of timeCurves had
// eventAction.
func (e *dockerEnv) timeChange(ctx context.Context, action func() error, eventAction string, n int, match func(dockerEvent) bool) (time.Duration, error) {
	curves, _, err := e.timeCurves(ctx, action, n, match, eventAction)
	if err != nil {
		return 0, err
	}
	return curves[0][n-1], nil
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
// swarm, if the run made it), the daemon, every container and volume of
// the run, checking that none is left, the pull part's pushed reference
// and registry, the images and the temporary directory.
func (e *dockerEnv) teardown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var errs []error
	if e.swarm != nil {
		errs = append(errs, e.swarm.teardown(ctx, e.cli, e.runID))
	}
	if e.daemon != nil {
		errs = append(errs, e.daemon.stop())
	}
	// removing again what Swarm's own clean-up was still busy with
	_, err := testpoll.Wait(ctx, time.Minute, func() error {
		list, err := listContainers(ctx, e.cli, map[string]string{runLabel: e.runID})
		if err != nil || len(list) == 0 {
			return err
		}
		if err := dockertest.RemoveContainers(ctx, e.cli, runLabel, e.runID); err != nil {
			return err
		}
		return fmt.Errorf("cleanup: %d containers of run %s left behind", len(list), e.runID)
	})
	errs = append(errs, err, removeRunVolumes(ctx, e.cli, e.runID))
	if e.pullRef != "" {
		errs = append(errs, registrytest.RemoveRef(ctx, e.pullRef))
	}
	if e.registry != nil {
		errs = append(errs, e.registry.Stop())
	}
	for _, img := range append(e.extraImages, e.image) {
		errs = append(errs, removeImage(ctx, e.cli, img))
	}
	if e.tempDir != "" {
		errs = append(errs, os.RemoveAll(e.tempDir))
	}
	return errors.Join(append(errs, e.cli.Close())...)
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
