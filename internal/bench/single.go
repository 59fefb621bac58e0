package bench

// This file is the parts of one controller at a time. Two of them set the
// manager against one plain create+start of the image (`docker run -d`,
// until its start event), the least it can take:
//   - replacement: docker rm -f of one replica of a running controller
//     until a new container of it starts;
//   - end to end: a new controller of one replica, from the spec write
//     until its container runs and its status in etcd says readyReplicas
//     1, as a user of `rcctl apply --wait` sees it; each try also times one
//     plain create+start, the two alternating in which goes first, so that
//     the machine's noise hits both sample sets alike.
//
// The third is the cost of failure: a controller of a missing image with
// many replicas, and how many create calls the daemon makes in the first
// minute. A failed create of a missing image makes no Docker event, so the
// daemon's own counters are read from its /metrics: the creates, and every
// task-control call (an image check is no create, but a cost).

import (
	"context"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
)

// replaceReplicas is the size of the controller whose replicas are removed.
const replaceReplicas = 3

// measureReplacement times plain create+starts, one at a time, then
// removes one replica of a running controller at a time and times until a
// new container of the controller starts.
func (e *dockerEnv) measureReplacement(ctx context.Context, cfg Config, res *DockerResults) error {
	for i := range cfg.ReplaceTries {
		if err := e.plainStart(ctx, "rmbench-"+e.runID+"-plain", i+1, &res.DockerStart); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.progress, "plain docker create+start: %s\n", spread(res.DockerStart))

	id := "rmbench-" + e.runID + "-repl"
	labels := map[string]string{api.LabelController: id}
	match := labelled(api.LabelController, id)
	_, err := e.timeChange(ctx, func() error {
		_, err := e.daemon.store.CreateController(ctx, demospec.Controller(id, e.image, replaceReplicas, e.runLabels("manager")))
		return err
	}, "start", replaceReplicas, match)
	if err != nil {
		return fmt.Errorf("replacement: start %d replicas: %w", replaceReplicas, err)
	}
	for i := range cfg.ReplaceTries {
		running, err := waitRunning(ctx, e.cli, labels, replaceReplicas, false)
		if err != nil {
			return fmt.Errorf("replacement: %w", err)
		}
		victim := running[i%len(running)].ID
		if err := e.timeReplacement(ctx, victim, match, res); err != nil {
			return fmt.Errorf("replacement %d: %w", i+1, err)
		}
		if err := sleepCtx(ctx, 300*time.Millisecond); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.progress, "replacement after rm -f: %s; the old container destroyed after %s\n", spread(res.Replacement), spread(res.ReplacementFreed))
	_, err = e.timeChange(ctx, func() error { return e.daemon.store.DeleteController(ctx, id) }, "destroy", replaceReplicas, match)
	if err != nil {
		return fmt.Errorf("replacement: delete the controller: %w", err)
	}
	return e.settle(ctx, labels)
}

// timeReplacement removes the victim with rm -f and times, from the call,
// its destroy event (the engine has freed its name, which its replacement
// takes) and the start event of another container that match accepts.
func (e *dockerEnv) timeReplacement(ctx context.Context, victim string, match func(dockerEvent) bool, res *DockerResults) error {
	mark := e.rec.mark()
	start := time.Now()
	if err := removeContainer(ctx, e.cli, victim); err != nil {
		return err
	}
	destroyed, err := e.rec.waitEvents(ctx, mark, "destroy", 1, func(ev dockerEvent) bool { return ev.ID == victim })
	if err != nil {
		return err
	}
	started, err := e.rec.waitEvents(ctx, mark, "start", 1, func(ev dockerEvent) bool { return match(ev) && ev.ID != victim })
	if err != nil {
		return err
	}
	res.ReplacementFreed = append(res.ReplacementFreed, destroyed[0].At.Sub(start))
	res.Replacement = append(res.Replacement, started[0].At.Sub(start))
	return nil
}

// plainStart times one create+start of the image named <id>-<try>, as
// `docker run -d`, until its start event, into samples, removes the
// container and pauses 200 ms.
func (e *dockerEnv) plainStart(ctx context.Context, id string, try int, samples *Durations) error {
	task := plainTask(id, try, e.image, e.runLabels("plain"), false)
	var ids []string
	d, err := e.timeChange(ctx, func() (err error) {
		ids, err = task.run(ctx, e.cli)
		return err
	}, "start", 1, func(ev dockerEvent) bool { return slices.Contains(ids, ev.ID) })
	if err == nil {
		*samples = append(*samples, d)
		err = task.remove(ctx, e.cli, ids)
	}
	if err != nil {
		return fmt.Errorf("plain docker start: %w", err)
	}
	return sleepCtx(ctx, 200*time.Millisecond)
}

// measureEndToEnd writes new controllers one after the other, each deleted
// before the next, and takes as many plain create+starts between them, the
// plain one first in every other try.
func (e *dockerEnv) measureEndToEnd(ctx context.Context, cfg Config, res *DockerResults) error {
	for i := range cfg.EndToEndTries {
		steps := []func() error{
			func() error { return e.plainStart(ctx, "rmbench-"+e.runID+"-e2eplain", i+1, &res.EndToEndPlain) },
			func() error { return e.endToEndManager(ctx, i, res) },
		}
		if i%2 == 1 {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return fmt.Errorf("end to end %d: %w", i+1, err)
			}
		}
	}
	fmt.Fprintf(e.progress, "end to end: p50 %s, p99 %s; plain create+start alongside: p50 %s, p99 %s\n",
		fmtDuration(res.EndToEnd.Percentile(50)), fmtDuration(res.EndToEnd.Percentile(99)),
		fmtDuration(res.EndToEndPlain.Percentile(50)), fmtDuration(res.EndToEndPlain.Percentile(99)))
	return nil
}

// endToEndManager is try i of the manager: a new controller, timed until
// its container started and until its status said readyReplicas 1, then
// deleted.
func (e *dockerEnv) endToEndManager(ctx context.Context, i int, res *DockerResults) error {
	id := fmt.Sprintf("rmbench-%s-e2e-%d", e.runID, i+1)
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready, err := e.watchStatus(watchCtx, id, "readyReplicas 1", func(st *api.ReplicationControllerStatus) (bool, error) { return st.ReadyReplicas >= 1, nil })
	if err != nil {
		return err
	}
	match := labelled(api.LabelController, id)
	curves, start, err := e.timeCurves(ctx, func() error {
		_, err := e.daemon.store.CreateController(ctx, demospec.Controller(id, e.image, 1, e.runLabels("manager")))
		return err
	}, 1, match, "start")
	if err != nil {
		return err
	}
	at, err := ready()
	if err != nil {
		return err
	}
	running, status := curves[0][0], at.Sub(start)
	res.EndToEndRunning = append(res.EndToEndRunning, running)
	res.EndToEndStatus = append(res.EndToEndStatus, status)
	res.EndToEnd = append(res.EndToEnd, max(running, status))

	if _, err := e.timeChange(ctx, func() error { return e.daemon.store.DeleteController(ctx, id) }, "destroy", 1, match); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return sleepCtx(ctx, 200*time.Millisecond)
}

// watchStatus watches controller id's status for one that ends the wait:
// ends says so, with an error when what is waited for (what) will never
// come. The watch is in place when it returns; it ends with ctx. The
// returned func waits for that status, for at most changeTimeout, and
// returns when it was put.
func (e *dockerEnv) watchStatus(ctx context.Context, id, what string, ends func(*api.ReplicationControllerStatus) (bool, error)) (func() (time.Time, error), error) {
	watch := e.daemon.client.Watch(ctx, e.daemon.store.StatusKey(id), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return nil, fmt.Errorf("watch status: %w", resp.Err())
	}
	type seen struct {
		at  time.Time
		err error
	}
	out := make(chan seen, 1)
	go func() {
		for resp := range watch {
			for _, ev := range resp.Events {
				at := time.Now()
				if st, err := api.DecodeStatus(ev.Kv.Value); ev.Type == clientv3.EventTypePut && err == nil {
					if done, err := ends(st); done {
						out <- seen{at, err}
						return
					}
				}
			}
		}
	}()
	return func() (time.Time, error) {
		select {
		case s := <-out:
			return s.at, s.err
		case <-time.After(changeTimeout):
			return time.Time{}, fmt.Errorf("no status with %s within %s", what, changeTimeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}, nil
}

// measureMissingImage writes a controller of a missing image, counts the
// daemon's creates and task-control calls over the window, reads the
// status and deletes the controller.
func (e *dockerEnv) measureMissingImage(ctx context.Context, cfg Config, res *DockerResults) error {
	id := "rmbench-" + e.runID + "-missing"
	f := &FailureResult{Image: "rmbench-missing-" + e.runID + ":latest", Replicas: cfg.FailureReps, Window: cfg.FailureWindow}
	creates := func() (map[string]float64, error) {
		return e.daemon.metrics(ctx, "replication_manager_containers_total", "result", map[string]string{"operation": "create"})
	}
	createsBefore, err := creates()
	if err != nil {
		return err
	}
	callsBefore, err := e.daemon.calls(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := e.daemon.store.CreateController(ctx, demospec.Controller(id, f.Image, f.Replicas, e.runLabels("manager"))); err != nil {
		return fmt.Errorf("missing image: %w", err)
	}
	fmt.Fprintf(e.progress, "missing image: %d replicas of %s, counting creates for %s\n", f.Replicas, f.Image, f.Window)
	if err := sleepCtx(ctx, time.Until(start.Add(f.Window))); err != nil {
		return err
	}
	createsAfter, err := creates()
	if err != nil {
		return err
	}
	f.CreateErrors = int(createsAfter["error"] - createsBefore["error"])
	f.CreateSuccesses = int(createsAfter["success"] - createsBefore["success"])
	callsAfter, err := e.daemon.calls(ctx)
	if err != nil {
		return err
	}
	f.DockerCalls = callsSince(callsBefore, callsAfter, 1)
	st, err := e.daemon.store.GetStatus(ctx, id)
	if err != nil {
		return fmt.Errorf("missing image: %w", err)
	}
	f.Condition = "none"
	if c := st.FindCondition(api.ConditionReplicaFailure); c != nil {
		f.Condition = c.Reason + ": " + c.Message
	}
	if err := e.daemon.store.DeleteController(ctx, id); err != nil {
		return fmt.Errorf("missing image: %w", err)
	}
	fmt.Fprintf(e.progress, "missing image: %d failed and %d successful creates in %s\n", f.CreateErrors, f.CreateSuccesses, f.Window)
	res.Failure = f
	return nil
}
