package bench

// This file is the control plane's mass rollout, the worker's last
// measurement (--rollout, with the fake): a fresh host on the same fake
// and etcd syncs every controller once, then every spec is written with a
// new image at once, and the rollout of every controller (default
// strategy: stop-first, one container at a time, each step decided by the
// leader and gated on availability, which waits the default
// monitorSeconds after each new container; the fake's containers are
// ready at once) is timed until each controller's status in etcd says
// Progressing/RolloutComplete with updatedReplicas N and every container
// of the fake has its controller's new template.
//
// Meanwhile new controllers of one replica are written at a steady pace
// and each is timed from its write until its first create. Unlike the idle
// probe loop, a probe does not wait for the one before it: behind a queue
// of rolling controllers each create can take far longer than the gap, and
// a loop that waited would sample the rollout a dozen times, only when a
// probe got through.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

const (
	// scaleRolloutImage is the image of every controller's new template.
	scaleRolloutImage = "demo-task:v2"
	// scaleRolloutTimeout bounds the wait for every rollout.
	scaleRolloutTimeout = 5 * time.Minute
	// rolloutProbePrefix names the probes written during the rollout.
	rolloutProbePrefix = probePrefix + "rollout-"
	// rolloutProbeGap is the pause between two probes' writes.
	rolloutProbeGap = 10 * time.Millisecond
)

// probeTimes records the first create of each probe written during the
// rollout, from the fake's CreateErr hook; safe for concurrent use.
type probeTimes struct {
	mu    sync.Mutex
	first map[string]time.Time // container name → its first create
}

func (p *probeTimes) hit(name string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.first[name]; !ok {
		p.first[name] = at
	}
}

func (p *probeTimes) get(name string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.first[name]
	return at, ok
}

// measureRollout rolls every controller out to scaleRolloutImage.
func (w *scaleWorker) measureRollout(ctx context.Context) (_ *ScaleRollout, err error) {
	hashes := make(map[string]string, w.controllers)
	for i := range w.controllers {
		rc := newController(scaleID(i), scaleRolloutImage, w.replicas, nil)
		hashes[rc.ID] = api.TemplateHash(&rc.DesiredState.TaskTemplate)
	}
	m, err := w.startManager(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, m.stop()) }()
	existing := w.controllers + w.probes + w.busyProbes()
	if err := m.waitSyncs(ctx, uint64(existing)); err != nil {
		return nil, fmt.Errorf("rollout: the restarted manager's first syncs: %w", err)
	}
	if err := m.waitQuiet(ctx); err != nil {
		return nil, err
	}
	before, err := m.rolloutCounters()
	if err != nil {
		return nil, err
	}
	callsBefore := w.fake.Counts()

	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	rolled, err := w.watchRolledOut(watchCtx)
	if err != nil {
		return nil, err
	}
	res := &ScaleRollout{}
	stop := make(chan struct{})
	var probes probeResult
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() { probes = w.rolloutProbes(ctx, m, stop) })
	err = w.writeSpecs(ctx, scaleRolloutImage)
	res.WriteSpecs = time.Since(start)
	if err == nil {
		res.Done, res.Complete, err = w.waitRolledOut(ctx, rolled, hashes, start)
	}
	close(stop)
	wg.Wait()
	if err = errors.Join(err, probes.err); err != nil {
		return nil, fmt.Errorf("rollout: %w", err)
	}
	res.EventToCreate, res.EventToAssignment, res.QueueDepthMax = probes.times, probes.assigned, probes.depthMax

	after, err := m.rolloutCounters()
	if err != nil {
		return nil, err
	}
	res.Steps = after.steps - before.steps
	res.Syncs = uint64(after.syncs - before.syncs)
	res.EventsDropped = after.eventsDropped - before.eventsDropped
	res.Calls = fakeCallsSince(callsBefore, w.fake.Counts())
	w.log("rollout of every controller: complete in %s (specs written in %s; half the controllers by %s), %.0f steps, %d syncs, %.0f events dropped, queue depth up to %.0f; event → create meanwhile: p50 %s, p99 %s (n=%d), of which the leader's assignment p50 %s, p99 %s",
		fmtDuration(res.Complete), fmtDuration(res.WriteSpecs), fmtDuration(res.Done.Median()), res.Steps, res.Syncs, res.EventsDropped, res.QueueDepthMax,
		fmtDuration(res.EventToCreate.Percentile(50)), fmtDuration(res.EventToCreate.Percentile(99)), len(res.EventToCreate),
		fmtDuration(res.EventToAssignment.Percentile(50)), fmtDuration(res.EventToAssignment.Percentile(99)))
	return res, nil
}

// statusAt is a controller whose status said its rollout is complete, and
// when the watch saw it.
type statusAt struct {
	id string
	at time.Time
}

// watchRolledOut watches every status and sends, once per controller, the
// first one of a spec written after the watch started that says its
// rollout of the worker's replicas is complete. The watch is in place when
// it returns; it ends with ctx.
func (w *scaleWorker) watchRolledOut(ctx context.Context) (<-chan statusAt, error) {
	// any spec written from now on has a higher revision than this
	resp, err := w.client.Get(ctx, w.store.ControllersPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return nil, fmt.Errorf("rollout: etcd revision: %w", err)
	}
	after := resp.Header.Revision
	watch := w.client.Watch(ctx, w.store.StatusPrefix(), clientv3.WithPrefix(), clientv3.WithRev(after+1), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return nil, fmt.Errorf("rollout: watch statuses: %w", resp.Err())
	}
	out := make(chan statusAt, w.controllers)
	go func() {
		defer close(out)
		sent := make(map[string]bool, w.controllers)
		for resp := range watch {
			at := time.Now()
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut {
					continue
				}
				id := strings.TrimPrefix(string(ev.Kv.Key), w.store.StatusPrefix())
				if sent[id] || strings.HasPrefix(id, probePrefix) {
					continue
				}
				st, err := api.DecodeStatus(ev.Kv.Value)
				if err != nil || st.ObservedRevision <= after {
					continue
				}
				if seen, ends := rolloutOutcome(st, w.replicas); ends && seen.err == nil {
					sent[id] = true
					out <- statusAt{id: id, at: at}
				}
			}
		}
	}()
	return out, nil
}

// waitRolledOut waits until every controller of hashes has said its
// rollout is complete and every container in the fake is a replica of its
// controller's new template. It returns when each controller said so, in
// the order they did, and when both held, from start.
func (w *scaleWorker) waitRolledOut(ctx context.Context, rolled <-chan statusAt, hashes map[string]string, start time.Time) (Durations, time.Duration, error) {
	done := make(Durations, 0, len(hashes))
	timeout := time.NewTimer(scaleRolloutTimeout)
	defer timeout.Stop()
	for len(done) < len(hashes) {
		select {
		case s, ok := <-rolled:
			if !ok {
				return nil, 0, errors.New("status watch ended")
			}
			if _, ours := hashes[s.id]; ours {
				done = append(done, s.at.Sub(start))
			}
		case <-timeout.C:
			outdated, missing := w.rolloutLeft(hashes)
			return nil, 0, fmt.Errorf("%d of %d controllers said their rollout is complete within %s (%d containers of an old template left, %d of the new one missing)",
				len(done), len(hashes), scaleRolloutTimeout, outdated, missing)
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	// the status is written after the sync's deletes and creates: the
	// fake should agree at once
	var outdated, missing int
	complete := done[len(done)-1]
	if err := waitUntil(ctx, time.Minute, 20*time.Millisecond, func() bool {
		outdated, missing = w.rolloutLeft(hashes)
		if outdated != 0 || missing != 0 {
			complete = 0 // when the fake agrees, then
			return false
		}
		return true
	}); err != nil {
		return nil, 0, fmt.Errorf("every controller said its rollout is complete, but %d containers of an old template are left and %d of the new one missing: %w", outdated, missing, err)
	}
	if complete == 0 {
		complete = time.Since(start)
	}
	return done, complete, nil
}

// rolloutLeft counts, over the controllers of hashes, the containers of
// another template and the containers of the new one still to come.
func (w *scaleWorker) rolloutLeft(hashes map[string]string) (outdated, missing int) {
	updated := make(map[string]int, len(hashes))
	for _, t := range w.fake.Tasks() {
		rc := t.Labels[api.LabelController]
		hash, ok := hashes[rc]
		switch {
		case !ok:
		case t.Labels[api.LabelTemplateHash] == hash:
			updated[rc]++
		default:
			outdated++
		}
	}
	for rc := range hashes {
		missing += max(0, w.replicas-updated[rc])
	}
	return outdated, missing
}

// probeResult is what rolloutProbes measured.
type probeResult struct {
	times, assigned Durations
	depthMax        float64
	err             error
}

// rolloutProbes writes a new controller of one replica every
// rolloutProbeGap until stop is closed, reading the work queue's depth
// before each, then waits for every probe's first create and returns how
// long each took from its write, in the order written.
func (w *scaleWorker) rolloutProbes(ctx context.Context, m *managerRun, stop <-chan struct{}) probeResult {
	var res probeResult
	var names []string
	var written []time.Time
	for i := 0; len(names) == 0 || !closed(stop); i++ {
		if depth, err := m.queueDepth(); err == nil {
			res.depthMax = max(res.depthMax, depth)
		}
		id := fmt.Sprintf("%s%04d", rolloutProbePrefix, i)
		at := time.Now()
		if _, err := w.store.CreateController(ctx, newController(id, "demo-task:latest", 1, nil)); err != nil {
			res.err = fmt.Errorf("probe: %w", err)
			return res
		}
		names, written = append(names, id+"-1"), append(written, at)
		if res.err = sleepCtx(ctx, rolloutProbeGap); res.err != nil {
			return res
		}
	}
	for i, name := range names {
		var at time.Time
		if err := waitUntil(ctx, 30*time.Second, time.Millisecond, func() (ok bool) {
			at, ok = w.rolloutHits.get(name)
			return ok
		}); err != nil {
			res.err = fmt.Errorf("probe %s: no create: %w", name, err)
			return res
		}
		res.times = append(res.times, at.Sub(written[i]))
		assigned, err := w.assignedAt(ctx, strings.TrimSuffix(name, "-1"))
		if err != nil {
			res.err = err
			return res
		}
		res.assigned = append(res.assigned, assigned.Sub(written[i]))
	}
	return res
}

// closed reports whether c is closed.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// rolloutCounters are the manager's counters a rollout moves.
type rolloutCounters struct {
	steps, syncs, eventsDropped float64
}

// rolloutCounters reads them from the manager's registry.
func (m *managerRun) rolloutCounters() (rolloutCounters, error) {
	families, err := m.reg.Gather()
	if err != nil {
		return rolloutCounters{}, fmt.Errorf("gather metrics: %w", err)
	}
	var c rolloutCounters
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			switch f.GetName() {
			case "replication_manager_sync_duration_seconds":
				c.syncs += float64(metric.GetHistogram().GetSampleCount())
			case "replication_manager_rollout_steps_total":
				c.steps += metric.GetCounter().GetValue()
			case "replication_manager_events_dropped_total":
				c.eventsDropped += metric.GetCounter().GetValue()
			}
		}
	}
	return c, nil
}

// queueDepth reads the work queue's depth: the controllers waiting for a
// worker.
func (m *managerRun) queueDepth() (float64, error) {
	families, err := m.reg.Gather()
	if err != nil {
		return 0, fmt.Errorf("gather metrics: %w", err)
	}
	var depth float64
	for _, f := range families {
		if f.GetName() == "workqueue_depth" {
			for _, metric := range f.GetMetric() {
				depth += metric.GetGauge().GetValue()
			}
		}
	}
	return depth, nil
}

// fakeCallsSince is the fake's calls of after that were not in before, by
// operation.
func fakeCallsSince(before, after taskcontrol.FakeCounts) map[string]float64 {
	out := make(map[string]float64)
	for op, d := range map[string]int{
		"list": after.List - before.List, "create": after.Create - before.Create, "delete": after.Delete - before.Delete,
		"rename": after.Rename - before.Rename, "inspect": after.Inspect - before.Inspect, "image": after.Image - before.Image,
	} {
		if d > 0 {
			out[op] = float64(d)
		}
	}
	return out
}
