package bench

// This file is the control-plane part's subprocess: one host as the
// daemon composes it (host.go: the leader's ReplicationManager and the node's
// Agent, the node registered under a lease) with the
// in-memory fake in place of Docker, on a real etcd that runs in the
// parent, so that this process's resident memory is the host's and the
// fake's, not etcd's. It converges N controllers (the leader assigns
// every slot to the node, the node creates them and reports, the leader
// writes the statuses), then times the node's full resyncs, spec writes
// until their first create and until their status, counts what one steady
// sync period costs (scale_steady.go), and times a restart of both
// roles that rewrites every report and status; with --rollout, last, a new
// template in every spec (scale_rollout.go). With --task-control=bare it
// runs the host on bareTasks instead and only measures memory. It prints
// a ScaleResult as JSON on stdout and its progress on stderr.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// ScaleWorkerCommand is the hidden subcommand that runs RunScaleWorker.
const ScaleWorkerCommand = "scale-worker"

const (
	// specBatch is how many spec puts go in one etcd transaction (etcd
	// allows 128 operations per transaction by default).
	specBatch = 100
	// quietFor is how long no sync may finish before the manager counts
	// as idle.
	quietFor = 300 * time.Millisecond
	// scaleTimeout bounds every wait of the worker.
	scaleTimeout = 10 * time.Minute
	// probePrefix names the controllers whose first create is timed.
	probePrefix = "probe-"
)

// scaleWorker measures one controller count.
type scaleWorker struct {
	client *clientv3.Client
	store  *registry.Store
	// tc is the task control the node runs on: fake, or a bareTasks
	// when fake is nil; count says how many containers it holds.
	tc         agent.TaskControlInterface
	count      func() int
	fake       *taskcontrol.Fake
	mode       string
	profileDir string
	log        func(format string, args ...any)

	controllers, replicas, probes, resyncs int
	// rollout also measures a new template in every spec (scale_rollout.go).
	rollout bool

	// probeHits receives the time of every create of a probe controller,
	// from the fake's CreateErr hook; rolloutHits keeps those of the
	// probes written during the mass rollout.
	probeHits   chan probeHit
	rolloutHits probeTimes
	// assigned keeps when the leader's first assignment of each probe
	// controller reached this process (watchAssigned), by controller id.
	assigned probeTimes
}

type probeHit struct {
	name string
	at   time.Time
}

// RunScaleWorker parses the worker's flags, measures, and writes the
// ScaleResult to stdout.
func RunScaleWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet(ScaleWorkerCommand, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	etcdURL := fs.String("etcd", "", "etcd client URL")
	prefix := fs.String("prefix", "/rm-bench", "registry prefix, fresh for this worker")
	profileDir := fs.String("profile-dir", "", "where the pprof profiles go")
	w := &scaleWorker{}
	fs.IntVar(&w.controllers, "controllers", 1000, "controllers")
	fs.IntVar(&w.replicas, "replicas", 10, "replicas per controller")
	fs.IntVar(&w.probes, "probes", 200, "spec writes timed until their first create")
	fs.IntVar(&w.resyncs, "resyncs", 5, "full resyncs timed")
	fs.StringVar(&w.mode, "task-control", "fake", "fake: taskcontrol.Fake, every measurement; bare: bareTasks, memory only")
	fs.BoolVar(&w.rollout, "rollout", false, "with the fake, last, roll every controller out to a new template")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *etcdURL == "" || *profileDir == "" {
		return errors.New("scale-worker: --etcd and --profile-dir are required")
	}
	// the client's own log of retries (the leader's puts cancelled at a
	// host's stop) would drown the progress output; its failures reach
	// the host and the worker
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{*etcdURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer client.Close()

	w.client = client
	w.store = registry.NewStore(client, *prefix)
	w.profileDir = *profileDir
	w.probeHits = make(chan probeHit, 1)
	w.rolloutHits.first = make(map[string]time.Time)
	w.assigned.first = make(map[string]time.Time)
	switch w.mode {
	case "fake":
		w.fake = &taskcontrol.Fake{CreateErr: w.onCreate}
		w.tc, w.count = w.fake, w.fake.Len
	case "bare":
		bare := newBareTasks()
		w.tc, w.count = bare, bare.Len
	default:
		return fmt.Errorf("scale-worker: --task-control: fake or bare, got %q", w.mode)
	}
	w.log = func(format string, args ...any) {
		fmt.Fprintf(stderr, "  scale %d (%s): %s\n", w.controllers, w.mode, fmt.Sprintf(format, args...))
	}
	res, err := w.run(ctx)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// onCreate is the fake's CreateErr hook: it is called on every create and
// timestamps those of probe controllers. It never fails a create.
func (w *scaleWorker) onCreate(spec api.TaskSpec) error {
	if strings.HasPrefix(spec.Name, rolloutProbePrefix) {
		w.rolloutHits.hit(spec.Name, time.Now())
		return nil
	}
	if strings.HasPrefix(spec.Name, probePrefix) {
		select {
		case w.probeHits <- probeHit{name: spec.Name, at: time.Now()}:
		default: // a probe created twice: the first time is the one that counts
		}
	}
	return nil
}

func (w *scaleWorker) run(ctx context.Context) (ScaleResult, error) {
	res := ScaleResult{Controllers: w.controllers, Replicas: w.replicas, Workers: agent.DefaultWorkers, Profiles: map[string]string{}}

	start := time.Now()
	if err := w.writeSpecs(ctx, "demo-task:latest"); err != nil {
		return res, err
	}
	res.WriteSpecs = time.Since(start)
	w.log("%d specs written in %s", w.controllers, fmtDuration(res.WriteSpecs))

	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	if w.fake != nil {
		if err := w.watchAssigned(watchCtx); err != nil {
			return res, err
		}
	}
	ready, err := w.watchAllReady(watchCtx, w.controllers, w.replicas)
	if err != nil {
		return res, err
	}
	m, err := w.startManager(ctx)
	if err != nil {
		return res, err
	}
	err = w.measure(ctx, m, &res, start, ready)
	if err = errors.Join(err, m.stop()); err != nil {
		return res, err
	}
	if w.fake != nil {
		err = w.timeColdResync(ctx, &res)
	}
	if err == nil && w.fake != nil && w.rollout {
		err = w.profile("rollout", &res, func() (err error) {
			res.Rollout, err = w.measureRollout(ctx)
			return err
		})
	}
	return res, err
}

// measure converges the host and takes the measurements that need it
// running; the memory, last, stops it.
func (w *scaleWorker) measure(ctx context.Context, m *managerRun, res *ScaleResult, specsWritten time.Time, ready *readyTally) error {
	want := w.controllers * w.replicas
	err := w.profile("converge", res, func() error {
		return waitUntil(ctx, scaleTimeout, 10*time.Millisecond, func() bool { return w.count() == want })
	})
	if err != nil {
		return fmt.Errorf("first convergence: %d of %d containers: %w", w.count(), want, err)
	}
	res.Converge = time.Since(m.started)
	allReady, err := ready.wait(ctx, scaleTimeout)
	if err != nil {
		return fmt.Errorf("first convergence: %w", err)
	}
	res.ConvergeStatuses = allReady.Sub(specsWritten)
	if err := m.waitQuiet(ctx); err != nil {
		return err
	}
	w.log("converged to %d containers in %s; every status ready %s after the first spec write", want, fmtDuration(res.Converge), fmtDuration(res.ConvergeStatuses))
	if w.fake == nil {
		// a process in its steady state has done resyncs and holds their
		// garbage until the next GC: do one, then measure
		if err := w.timeResyncs(ctx, m, res, 1); err != nil {
			return err
		}
		return w.measureMemory(m, res)
	}
	// the fake's record of every call is a test aid, not the manager's
	// memory: drop it
	w.fake.Reset()
	if err := w.profile("resync", res, func() error { return w.timeResyncs(ctx, m, res, w.resyncs) }); err != nil {
		return err
	}
	if err := w.profile("events", res, func() error { return w.timeProbes(ctx, res) }); err != nil {
		return err
	}
	if err := w.profile("events-busy", res, func() error { return w.timeBusyProbes(ctx, m, res) }); err != nil {
		return err
	}
	err = w.profile("steady", res, func() (err error) {
		res.Steady, err = w.measureSteady(ctx, m)
		return err
	})
	if err != nil {
		return err
	}
	return w.measureMemory(m, res)
}

// scaleID is the id of the i-th controller.
func scaleID(i int) string { return fmt.Sprintf("%s%05d", scalePrefix, i) }

// scalePrefix begins every scaleID, and no probe's id.
const scalePrefix = "rc-"

// writeSpecs puts every spec, of image, in transactions of specBatch puts,
// a few at a time.
func (w *scaleWorker) writeSpecs(ctx context.Context, image string) error {
	return putControllers(ctx, w.client, w.store, w.controllers, func(i int) *api.ReplicationController {
		return newController(scaleID(i), image, w.replicas, nil)
	})
}

// putControllers puts the specs build returns for 0..n-1 in transactions
// of specBatch puts, a few at a time.
func putControllers(ctx context.Context, client *clientv3.Client, store *registry.Store, n int, build func(i int) *api.ReplicationController) error {
	batches := make(chan []clientv3.Op)
	errc := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ops := range batches {
				if _, err := client.Txn(ctx).Then(ops...).Commit(); err != nil {
					errc <- fmt.Errorf("write specs: %w", err)
					return
				}
			}
		})
	}
	var err error
	var ops []clientv3.Op
	for i := range n {
		rc := build(i)
		data, encErr := api.Encode(rc)
		if encErr != nil {
			err = encErr
			break
		}
		ops = append(ops, clientv3.OpPut(store.ControllerKey(rc.ID), string(data)))
		if len(ops) == specBatch || i == n-1 {
			select {
			case batches <- ops:
			case err = <-errc:
			}
			if err != nil {
				break
			}
			ops = nil
		}
	}
	close(batches)
	wg.Wait()
	close(errc)
	if err != nil {
		return err
	}
	return <-errc
}

// managerRun is one running host (host.go: the leader and the node's
// manager, as the daemon runs them) and the metrics the node's manager
// registers.
type managerRun struct {
	host    *host
	reg     *prometheus.Registry
	client  *clientv3.Client
	started time.Time

	stopOnce sync.Once
	err      error
}

// startManager runs a host on the worker's task control until stop. The
// sync period of both roles is an hour, so that only the resyncs the
// worker asks for happen.
func (w *scaleWorker) startManager(ctx context.Context) (*managerRun, error) {
	reg := prometheus.NewRegistry()
	h, err := startHost(ctx, w.client, w.store, w.tc, slog.New(slog.DiscardHandler), agent.Options{
		SyncPeriod:   time.Hour,
		RelistPeriod: agent.DefaultRelistPeriod, // as the daemon ships
		Registerer:   reg,
	})
	if err != nil {
		return nil, err
	}
	return &managerRun{host: h, reg: reg, client: w.client, started: h.started}, nil
}

// stop stops the host and returns what its roles' Run returned; later
// calls return the same. It lets go of the host, so that a GC can take
// its memory.
func (m *managerRun) stop() error {
	m.stopOnce.Do(func() {
		m.err = m.host.stop()
		m.host = nil
	})
	return m.err
}

// syncs returns how many syncs have finished, whatever their result.
func (m *managerRun) syncs() (uint64, error) {
	families, err := m.reg.Gather()
	if err != nil {
		return 0, fmt.Errorf("gather metrics: %w", err)
	}
	var n uint64
	for _, f := range families {
		if f.GetName() != "replication_manager_sync_duration_seconds" {
			continue
		}
		for _, metric := range f.GetMetric() {
			n += metric.GetHistogram().GetSampleCount()
		}
	}
	return n, nil
}

// waitSyncs waits until at least n syncs have finished.
func (m *managerRun) waitSyncs(ctx context.Context, n uint64) error {
	var got uint64
	var err error
	waitErr := waitUntil(ctx, scaleTimeout, time.Millisecond, func() bool {
		got, err = m.syncs()
		return err != nil || got >= n
	})
	if err != nil {
		return err
	}
	if waitErr != nil {
		return fmt.Errorf("%d syncs of %d: %w", got, n, waitErr)
	}
	return nil
}

// waitQuiet waits until, for quietFor, no sync of the node has finished
// and nothing was written to etcd (the leader's assignments and statuses,
// the node's reports and events): the worker's etcd has no other writer.
func (m *managerRun) waitQuiet(ctx context.Context) error {
	deadline := time.Now().Add(scaleTimeout)
	last, err := m.syncs()
	if err != nil {
		return err
	}
	lastRev, err := m.etcdRevision(ctx)
	if err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(quietFor):
		}
		n, err := m.syncs()
		if err != nil {
			return err
		}
		rev, err := m.etcdRevision(ctx)
		if err != nil {
			return err
		}
		if n == last && rev == lastRev {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("host still busy after %s", scaleTimeout)
		}
		last, lastRev = n, rev
	}
}

// etcdRevision is etcd's current revision, which every write moves.
func (m *managerRun) etcdRevision(ctx context.Context) (int64, error) {
	resp, err := m.client.Get(ctx, "rm-bench-revision", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// timeResyncs times the node's full resyncs: Synchronize lists the
// containers once and queues every controller; the resync is over when
// every controller has synced. Nothing changed, so no sync writes to etcd
// and the leader has nothing to decide.
func (w *scaleWorker) timeResyncs(ctx context.Context, m *managerRun, res *ScaleResult, n int) error {
	for range n {
		before, err := m.syncs()
		if err != nil {
			return err
		}
		start := time.Now()
		if err := m.host.rm.Resync(ctx); err != nil {
			return fmt.Errorf("resync: %w", err)
		}
		res.ResyncCall = append(res.ResyncCall, time.Since(start))
		if err := m.waitSyncs(ctx, before+uint64(w.controllers)); err != nil {
			return fmt.Errorf("resync: %w", err)
		}
		res.Resync = append(res.Resync, time.Since(start))
		if err := m.waitQuiet(ctx); err != nil {
			return err
		}
	}
	w.log("full resync: %s", spread(res.Resync))
	return nil
}

// timeProbes writes new controllers of one replica, one at a time, and
// times each from the write until the fake's first create call for it,
// and until its status says the replica is ready.
func (w *scaleWorker) timeProbes(ctx context.Context, res *ScaleResult) error {
	if err := w.probeLoop(ctx, probePrefix, w.probes, &res.EventToCreate, &res.CommitToCreate, &res.EventToStatus, &res.EventToAssignment); err != nil {
		return err
	}
	w.log("event → create: p50 %s, p99 %s (the leader's assignment: p50 %s, p99 %s); → status ready: p50 %s, p99 %s",
		fmtDuration(res.EventToCreate.Percentile(50)), fmtDuration(res.EventToCreate.Percentile(99)),
		fmtDuration(res.EventToAssignment.Percentile(50)), fmtDuration(res.EventToAssignment.Percentile(99)),
		fmtDuration(res.EventToStatus.Percentile(50)), fmtDuration(res.EventToStatus.Percentile(99)))
	return nil
}

// timeBusyProbes is timeProbes while full resyncs run back to back: what a
// resync does to the latency of a new controller.
func (w *scaleWorker) timeBusyProbes(ctx context.Context, m *managerRun, res *ScaleResult) error {
	busyCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for busyCtx.Err() == nil {
			before, err := m.syncs()
			if err != nil || m.host.rm.Resync(busyCtx) != nil {
				return
			}
			_ = m.waitSyncs(busyCtx, before+uint64(w.controllers))
		}
	})
	err := w.probeLoop(ctx, probePrefix+"busy-", w.busyProbes(), &res.EventToCreateBusy, nil, nil, &res.EventToAssignmentBusy)
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	w.log("event → create during resyncs: p50 %s, p99 %s (of which the leader's assignment p50 %s, p99 %s)",
		fmtDuration(res.EventToCreateBusy.Percentile(50)), fmtDuration(res.EventToCreateBusy.Percentile(99)),
		fmtDuration(res.EventToAssignmentBusy.Percentile(50)), fmtDuration(res.EventToAssignmentBusy.Percentile(99)))
	return m.waitQuiet(ctx)
}

// busyProbes is how many probes run during resyncs.
func (w *scaleWorker) busyProbes() int { return max(1, w.probes/2) }

// probeLoop writes count controllers named prefix0000, ... one after the
// other and appends to fromWrite the time from each write to its first
// create, and to fromAck (when not nil) the same from the write's
// acknowledgement. Each create comes after the leader's decision and its
// assignment write, and the node's claim of the slot in its report. The
// next probe is written once the probe's status in etcd, which the leader
// writes from the node's report, says its replica is ready; toStatus
// (when not nil) gets the time from the write until the watch saw it, and
// toAssigned (when not nil) the time until the leader's assignment of its
// slot reached this process.
func (w *scaleWorker) probeLoop(ctx context.Context, prefix string, count int, fromWrite, fromAck, toStatus, toAssigned *Durations) error {
	for i := range count {
		id := fmt.Sprintf("%s%04d", prefix, i)
		watchCtx, cancelWatch := context.WithCancel(ctx)
		statuses, err := w.watchReady(watchCtx, id)
		if err != nil {
			cancelWatch()
			return fmt.Errorf("probe %s: %w", id, err)
		}
		start, err := w.probe(ctx, id, statuses, fromWrite, fromAck, toStatus)
		cancelWatch()
		if err != nil {
			return err
		}
		if toAssigned != nil {
			at, err := w.assignedAt(ctx, id)
			if err != nil {
				return err
			}
			*toAssigned = append(*toAssigned, at.Sub(start))
		}
	}
	return nil
}

// watchAssigned watches the assignments of the probe controllers and
// keeps when the first of each reached this process, in w.assigned. The
// watch is in place when it returns; it ends with ctx.
func (w *scaleWorker) watchAssigned(ctx context.Context) error {
	prefix := w.store.AssignmentsPrefix()
	watch := w.client.Watch(ctx, prefix+probePrefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return fmt.Errorf("watch the probes' assignments: %w", resp.Err())
	}
	go func() {
		for resp := range watch {
			at := time.Now()
			for _, ev := range resp.Events {
				key := strings.TrimPrefix(string(ev.Kv.Key), prefix)
				if i := strings.LastIndexByte(key, '/'); ev.Type == clientv3.EventTypePut && i > 0 {
					w.assigned.hit(key[:i], at)
				}
			}
		}
	}()
	return nil
}

// assignedAt returns when the first assignment of probe id reached this
// process; the node's create of it came after, though its own watch may
// have delivered it a moment before this one did.
func (w *scaleWorker) assignedAt(ctx context.Context, id string) (time.Time, error) {
	var at time.Time
	err := waitUntil(ctx, 30*time.Second, time.Millisecond, func() (ok bool) {
		at, ok = w.assigned.get(id)
		return ok
	})
	if err != nil {
		return at, fmt.Errorf("probe %s: no assignment seen: %w", id, err)
	}
	return at, nil
}

// probe writes probe id and waits for its first create, then for its
// status in statuses. It returns when it wrote the spec.
func (w *scaleWorker) probe(ctx context.Context, id string, statuses <-chan readyAt, fromWrite, fromAck, toStatus *Durations) (time.Time, error) {
	start := time.Now()
	rev, err := w.store.CreateController(ctx, newController(id, "demo-task:latest", 1, nil))
	if err != nil {
		return start, fmt.Errorf("probe: %w", err)
	}
	acked := time.Now()
	select {
	case hit := <-w.probeHits:
		if hit.name != id+"-1" {
			return start, fmt.Errorf("probe %s: unexpected create of %s", id, hit.name)
		}
		*fromWrite = append(*fromWrite, hit.at.Sub(start))
		if fromAck != nil {
			*fromAck = append(*fromAck, hit.at.Sub(acked))
		}
	case <-time.After(30 * time.Second):
		return start, fmt.Errorf("probe %s: no create within 30s", id)
	case <-ctx.Done():
		return start, ctx.Err()
	}
	// the leader writes the probe's status from the node's report: let
	// that finish, so that probes do not queue behind each other
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s, ok := <-statuses:
			if !ok {
				return start, fmt.Errorf("probe %s: status watch ended", id)
			}
			if s.rev < rev {
				continue // not this spec's
			}
			if toStatus != nil {
				*toStatus = append(*toStatus, s.at.Sub(start))
			}
			return start, nil
		case <-timeout:
			return start, fmt.Errorf("probe %s: no status with its replica ready within 30s", id)
		case <-ctx.Done():
			return start, ctx.Err()
		}
	}
}

// readyAt is a status that says a replica is ready: of which spec
// revision, and when the watch saw it.
type readyAt struct {
	rev int64
	at  time.Time
}

// watchReady watches controller id's status and sends every put that
// says at least one replica is ready. The watch is in place when it
// returns; it ends with ctx.
func (w *scaleWorker) watchReady(ctx context.Context, id string) (<-chan readyAt, error) {
	watch := w.client.Watch(ctx, w.store.StatusKey(id), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		return nil, fmt.Errorf("watch status: %w", resp.Err())
	}
	out := make(chan readyAt, 16)
	go func() {
		defer close(out)
		for resp := range watch {
			at := time.Now()
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut {
					continue
				}
				st, err := api.DecodeStatus(ev.Kv.Value)
				if err != nil || st.ReadyReplicas < 1 {
					continue
				}
				select {
				case out <- readyAt{rev: st.ObservedRevision, at: at}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// measureMemory reads the resident memory with the host converged, then
// stops the host and reads it again once its memory is returned to the
// OS, so that the host's share can be told from the task control's. The
// caller stops the host if it fails before that.
func (w *scaleWorker) measureMemory(m *managerRun, res *ScaleResult) error {
	mem := &res.Memory
	var err error
	if mem.RSS, mem.PeakRSS, err = readSelfRSS(); err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&ms)
	mem.HeapInuse = ms.HeapInuse
	if mem.RSSAfterGC, _, err = readSelfRSS(); err != nil {
		return err
	}
	heapFile := filepath.Join(w.profileDir, fmt.Sprintf("heap-%s-%d.pprof", w.mode, w.controllers))
	if err := writeHeapProfile(heapFile); err != nil {
		return err
	}
	res.Profiles["heap"] = heapFile

	if err := m.stop(); err != nil {
		return fmt.Errorf("stop the host: %w", err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&ms)
	mem.HeapWithoutManager = ms.HeapInuse
	if mem.RSSWithoutManager, _, err = readSelfRSS(); err != nil {
		return err
	}
	w.log("RSS %s (peak %s); after a GC %s, without the manager %s", fmtBytes(mem.RSS), fmtBytes(mem.PeakRSS), fmtBytes(mem.RSSAfterGC), fmtBytes(mem.RSSWithoutManager))
	return nil
}

// timeColdResync removes every stored status and starts a new host, as a
// restart of the daemon: the node (its reports went with the last host's
// lease) lists the specs, the assignments and the containers, syncs every
// controller and writes every report; the leader, which finds no status,
// decides every controller and writes every status from the reports. It
// is over when every status is back.
func (w *scaleWorker) timeColdResync(ctx context.Context, res *ScaleResult) (err error) {
	total := w.controllers + w.probes + w.busyProbes()
	if _, err := w.client.Delete(ctx, w.store.StatusPrefix(), clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("delete statuses: %w", err)
	}
	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	written := make(chan int, 1)
	watch := w.client.Watch(watchCtx, w.store.StatusPrefix(), clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	// the watch must be in place before the first status is written
	if resp, ok := <-watch; !ok || !resp.Created {
		return fmt.Errorf("watch statuses: %w", resp.Err())
	}
	go func() {
		seen := make(map[string]bool, total)
		for resp := range watch {
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypePut {
					seen[string(ev.Kv.Key)] = true
				}
			}
			if len(seen) >= total {
				written <- len(seen)
				return
			}
		}
	}()

	m, err := w.startManager(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, m.stop()) }()
	select {
	case n := <-written:
		res.ColdResync = time.Since(m.started)
		res.StatusWrites = n
	case <-time.After(scaleTimeout):
		return fmt.Errorf("restart: not every status written within %s", scaleTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	w.log("restart with every status due: %s", fmtDuration(res.ColdResync))
	return nil
}

// profile runs fn under the CPU profiler, into <part>-<controllers>.pprof.
func (w *scaleWorker) profile(part string, res *ScaleResult, fn func() error) error {
	file := filepath.Join(w.profileDir, fmt.Sprintf("%s-%s-%d.pprof", part, w.mode, w.controllers))
	res.Profiles[part] = file
	return cpuProfile(file, fn)
}

// cpuProfile runs fn under the CPU profiler, into file.
func cpuProfile(file string, fn func() error) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	fnErr := fn()
	pprof.StopCPUProfile()
	return errors.Join(fnErr, f.Close())
}

func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	return f.Close()
}

// waitUntil polls cond every interval until it holds, timeout passes or
// ctx ends: apimachinery's poll, with the error saying how long it waited.
func waitUntil(ctx context.Context, timeout, interval time.Duration, cond func() bool) error {
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("not within %s", timeout)
	}
	return err
}
