package bench

// This file explains a convergence that missed its target. The daemon
// serves no pprof, so one more 0→N→0 runs with one host in this process
// (host.go: the leader and the node's manager as the daemon composes them,
// the same registry and taskcontrol code, on an embedded etcd) under the
// CPU profiler. Meanwhile, where the engine serves
// /debug/pprof, dockerd is profiled, and again during a raw 0→N, so that
// the engine's work for each can be compared. The daemon's log gives the
// timeline of its slow-start batches.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// convergenceProfiles are the files of one profiled round.
type convergenceProfiles struct {
	// Manager is the in-process host's CPU profile (leader and node) over
	// 0→N→0.
	Manager string
	// DockerdManager and DockerdRaw are dockerd's CPU profiles over the
	// manager's and raw Docker's 0→N; empty when the engine serves none.
	DockerdManager, DockerdRaw string
	ManagerUp, RawUp           time.Duration
}

// profileConvergence runs the profiled round.
func (e *dockerEnv) profileConvergence(ctx context.Context, n int, window time.Duration, runDir string) (_ *convergenceProfiles, err error) {
	p := &convergenceProfiles{Manager: filepath.Join(runDir, "convergence-manager.pprof")}
	etcd, err := startEtcd()
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	defer func() { err = errors.Join(err, etcd.Close()) }()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("profile: etcd client: %w", err)
	}
	defer client.Close()
	docker, err := taskcontrol.NewDocker(taskcontrol.DockerOptions{})
	if err != nil {
		return nil, err
	}
	defer docker.Close()
	store := registry.NewStore(client, "")
	h, err := startHost(ctx, client, store, docker, slog.New(slog.DiscardHandler), agent.Options{RelistPeriod: agent.DefaultRelistPeriod})
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	defer func() { err = errors.Join(err, h.stop()) }()
	if err := waitUntil(ctx, time.Minute, 10*time.Millisecond, h.rm.Synced); err != nil {
		return nil, fmt.Errorf("profile: manager: %w", err)
	}

	id := "rmbench-" + e.runID + "-prof"
	match := labelled(api.LabelController, id)
	var upErr, downErr error
	var dockerdErr error
	err = cpuProfile(p.Manager, func() error {
		dockerd := e.startDockerdProfile(ctx, window, filepath.Join(runDir, "dockerd-manager.pprof"))
		p.ManagerUp, upErr = e.timeChange(ctx, func() error {
			_, err := store.CreateController(ctx, newController(id, e.image, n, e.runLabels("manager")))
			return err
		}, "start", n, match)
		p.DockerdManager, dockerdErr = dockerd()
		if upErr != nil {
			return upErr
		}
		_, downErr = e.timeChange(ctx, func() error { return store.DeleteController(ctx, id) }, "destroy", n, match)
		return downErr
	})
	if err != nil {
		return nil, fmt.Errorf("profile: manager 0→%d→0: %w", n, err)
	}
	if err := e.settle(ctx, map[string]string{api.LabelController: id}); err != nil {
		return nil, err
	}

	// the same for raw Docker, for dockerd's side of the comparison
	dockerd := e.startDockerdProfile(ctx, window, filepath.Join(runDir, "dockerd-raw.pprof"))
	var ids []string
	p.RawUp, err = e.timeChange(ctx, func() error {
		ids = make([]string, n)
		errs := make([]error, n)
		done := make(chan struct{})
		for i := range n {
			go func() {
				ids[i], errs[i] = runContainer(ctx, e.cli, e.image, fmt.Sprintf("rmbench-%s-profraw-%d", e.runID, i+1), e.runLabels("raw"))
				done <- struct{}{}
			}()
		}
		for range n {
			<-done
		}
		return joinErrs(errs)
	}, "start", n, labelled(systemLabel, "raw"))
	file, dErr := dockerd()
	p.DockerdRaw = file
	if err != nil {
		return nil, fmt.Errorf("profile: raw 0→%d: %w", n, err)
	}
	if err := removeContainers(ctx, e.cli, ids); err != nil {
		return nil, err
	}
	if err := e.settle(ctx, e.runLabels("raw")); err != nil {
		return nil, err
	}
	if err := errors.Join(dockerdErr, dErr); err != nil {
		// dockerd's profiles are a bonus: say why they are missing
		fmt.Fprintf(e.progress, "dockerd profile: %v\n", err)
	}
	return p, nil
}

// startDockerdProfile asks the engine for a CPU profile of the next window
// into file, where it serves /debug/pprof on a local socket. The returned
// function waits for it and returns the file, or "" and why not.
func (e *dockerEnv) startDockerdProfile(ctx context.Context, window time.Duration, file string) func() (string, error) {
	if !strings.HasPrefix(e.cli.DaemonHost(), "unix://") {
		return func() (string, error) { return "", errors.New("the engine is not on a local socket") }
	}
	errc := make(chan error, 1)
	go func() {
		url := fmt.Sprintf("http://docker/debug/pprof/profile?seconds=%d", int(window.Round(time.Second)/time.Second))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			errc <- err
			return
		}
		resp, err := e.cli.HTTPClient().Do(req)
		if err != nil {
			errc <- fmt.Errorf("dockerd pprof: %w", err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errc <- fmt.Errorf("dockerd pprof: %s", resp.Status)
			return
		}
		f, err := os.Create(file)
		if err != nil {
			errc <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		errc <- errors.Join(err, f.Close())
	}()
	return func() (string, error) {
		if err := <-errc; err != nil {
			return "", err
		}
		return file, nil
	}
}

// explainConvergence profiles one more round and returns the summaries
// for the document, headed by the rounds' curves: when the k-th container
// of each 0→N ran.
func (e *dockerEnv) explainConvergence(ctx context.Context, cfg Config, runDir string, d *DockerResults) ([]ProfileSummary, error) {
	n := cfg.Replicas
	window := (max(d.ManagerUp.Median(), d.RawUp.Median()) + 2*time.Second).Round(time.Second)
	fmt.Fprintf(e.progress, "convergence missed its target: profiling one more 0→%d (manager in process, dockerd for %s)\n", n, window)
	p, err := e.profileConvergence(ctx, n, window, runDir)
	if err != nil {
		return nil, err
	}
	var timeline strings.Builder
	timeline.WriteString("When the k-th container ran, per round (from the start events):\n")
	for i := range d.ManagerCurves {
		fmt.Fprintf(&timeline, "  round %d manager: %s\n", i+1, fmtCurve(d.ManagerCurves[i]))
		if i < len(d.RawCurves) {
			fmt.Fprintf(&timeline, "  round %d raw:     %s\n", i+1, fmtCurve(d.RawCurves[i]))
		}
	}
	top, err := pprofTop(ctx, p.Manager, nil, nil)
	if err != nil {
		return nil, err
	}
	out := []ProfileSummary{{
		Target: fmt.Sprintf("Convergence 0→%d manager/raw: the manager's CPU over one more 0→%d→0 in process (0→%d in %s; raw Docker then %s)",
			n, n, n, fmtDuration(p.ManagerUp), fmtDuration(p.RawUp)),
		File: p.Manager,
		Top:  timeline.String() + "\n" + top,
	}}
	for _, f := range []struct{ what, file string }{
		{fmt.Sprintf("dockerd's API handlers over %s from the manager's 0→%d (other users of the engine show too)", window, n), p.DockerdManager},
		{fmt.Sprintf("dockerd's API handlers over %s from raw Docker's 0→%d (other users of the engine show too)", window, n), p.DockerdRaw},
	} {
		if f.file == "" {
			continue
		}
		// dockerd's own frames say little; its API handlers say which
		// calls cost the engine what
		top, err := pprofTop(ctx, f.file, []string{"-cum", "-nodecount=80", "-focus=Router"}, func(line string) bool {
			return strings.Contains(line, "Router).")
		})
		if err != nil {
			return out, err
		}
		out = append(out, ProfileSummary{Target: fmt.Sprintf("Convergence 0→%d manager/raw: %s", n, f.what), File: f.file, Top: top})
	}
	return out, nil
}
