package roles

// Benchmarks of one host at scale, as the daemon composes it (host_test.go:
// a manager of New, which leads and acts for its node, the node registered
// under its session), on the in-memory fake and the package's embedded
// etcd. They are the control-plane figures of docs/BENCHMARKS.md
// and run only with -bench:
//
//	go test ./registry/roles -run '^$' -bench 'Host' -benchtime 1x
//
// The scale is RM_BENCH_CONTROLLERS × RM_BENCH_REPLICAS (default 10,000 ×
// 10, the targets' scale; e.g. RM_BENCH_CONTROLLERS=100 for a quick try),
// the mass rollout's RM_BENCH_ROLLOUT_CONTROLLERS (default 1,000), and
// the steady period RM_BENCH_PERIOD (default the daemon's sync period),
// and the node's --relist-period RM_BENCH_RELIST_PERIOD (default the
// daemon's; 0 lists the containers at every pass, as before issue 30).

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/benchenv"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

const (
	// scaleTimeout bounds every wait of a benchmark at scale.
	scaleTimeout = 10 * time.Minute
	// quietFor is how long neither a sync of the node nor a write to etcd
	// may happen before the host counts as idle.
	quietFor = 300 * time.Millisecond
	// specBatch is how many spec puts go in one etcd transaction (etcd
	// allows 128 operations per transaction by default).
	specBatch = 100
)

// scaleHost is one converged host of controllers × replicas, with what the
// benchmarks read from it.
type scaleHost struct {
	// ctx and client are the owning benchmark's, which the host outlives
	// the sub-benchmarks of
	ctx      context.Context
	h        *host
	store    *registry.Store
	client   *clientv3.Client
	reg      *prometheus.Registry
	tc       agent.TaskControlInterface
	count    func() int
	creates  *createHook
	rc, reps int
	// probes numbers the probe controllers written so far.
	probes int
}

// createHook is the fake's CreateErr hook: it counts the creates, and
// sends the time of each create of a probe controller. It never fails one.
type createHook struct {
	n     atomic.Int64
	probe chan time.Time
}

func newCreateHook() *createHook { return &createHook{probe: make(chan time.Time, 1)} }

func (c *createHook) onCreate(spec api.TaskSpec) error {
	c.n.Add(1)
	if strings.HasPrefix(spec.Name, "probe-") {
		select {
		case c.probe <- time.Now():
		default: // a probe created twice: the first time counts
		}
	}
	return nil
}

// scaleID names controller i of a benchmark.
func scaleID(i int) string { return fmt.Sprintf("rc-%05d", i) }

// putControllers puts the specs build returns for 0..n-1 in transactions
// of specBatch puts, four at a time, and returns each one's revision.
func putControllers(tb testing.TB, ctx context.Context, client *clientv3.Client, store *registry.Store, n int, build func(i int) *api.ReplicationController) map[string]int64 {
	tb.Helper()
	var mu sync.Mutex
	revs := make(map[string]int64, n)
	batches := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for first := range batches {
				var ops []clientv3.Op
				var ids []string
				for i := first; i < min(first+specBatch, n); i++ {
					rc := build(i)
					data, err := api.Encode(rc)
					if err != nil {
						errs <- err
						return
					}
					ops, ids = append(ops, clientv3.OpPut(store.ControllerKey(rc.ID), string(data))), append(ids, rc.ID)
				}
				resp, err := client.Txn(ctx).Then(ops...).Commit()
				if err != nil {
					errs <- fmt.Errorf("write specs: %w", err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					revs[id] = resp.Header.Revision
				}
				mu.Unlock()
			}
		})
	}
	for first := 0; first < n; first += specBatch {
		batches <- first
	}
	close(batches)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
	return revs
}

// newScaleStore is a store on a key prefix of its own.
func newScaleStore(tb testing.TB) (*clientv3.Client, *registry.Store) {
	tb.Helper()
	client := testClient(tb)
	return client, newStore(tb, client, "bench")
}

// startScaleHost starts a host on tc, as the daemon's but with a sync
// period of an hour, so that only the passes a benchmark asks for run.
func startScaleHost(tb testing.TB, s *scaleHost) {
	tb.Helper()
	s.reg = prometheus.NewRegistry()
	h, err := startHost(s.ctx, s.client, s.store, s.tc, slog.New(slog.DiscardHandler),
		func(o *Options) {
			o.SyncPeriod, o.RelistPeriod = time.Hour, benchenv.Duration(tb, "RM_BENCH_RELIST_PERIOD", agent.DefaultRelistPeriod)
			o.Registerer = s.reg
		})
	if err != nil {
		tb.Fatal(err)
	}
	s.h = h
}

// convergeHost writes controllers × replicas specs and starts a host on
// tc (the fake when tc is nil). It returns once every status says every
// replica is ready and the host is quiet, with the time from the host's
// start until the last container was created, and from the first spec
// write until the last status said ready. The host runs until owner ends
// or stop.
func convergeHost(tb, owner testing.TB, tc agent.TaskControlInterface, controllers, replicas int) (s *scaleHost, containers, statuses time.Duration) {
	tb.Helper()
	s = &scaleHost{ctx: owner.Context(), tc: tc, rc: controllers, reps: replicas}
	s.client, s.store = newScaleStore(owner)
	if tc == nil {
		s.creates = newCreateHook()
		fake := &taskcontrol.Fake{CreateErr: s.creates.onCreate}
		s.tc, s.count = fake, fake.Len
	} else {
		s.count = tc.(interface{ Len() int }).Len
	}
	start := time.Now()
	revs := putControllers(tb, s.ctx, s.client, s.store, controllers, func(i int) *api.ReplicationController {
		return newController(scaleID(i), replicas)
	})
	ready := watchStatuses(tb, s, revs, func(st *api.ReplicationControllerStatus) bool {
		return st.Replicas == replicas && st.ReadyReplicas == replicas
	})
	startScaleHost(tb, s)
	want := controllers * replicas
	testpoll.Until(tb, scaleTimeout, fmt.Sprintf("%d containers", want), func() bool { return s.count() >= want })
	containers = time.Since(s.h.started)
	statuses = ready.wait(tb).Sub(start)
	s.waitQuiet(tb)
	return s, containers, statuses
}

// stop stops the host: its roles, and its lease (its node key and reports
// go with it).
func (s *scaleHost) stop(tb testing.TB) {
	tb.Helper()
	if s.h == nil {
		return
	}
	if err := s.h.stop(); err != nil {
		tb.Error(err)
	}
	s.h = nil
}

// forget deletes the stopped host's keys and compacts etcd's history, so
// that the next convergence starts on an etcd no larger than the first
// one did: without it, each run of -count or -benchtime Nx kept the keys
// of every earlier host, and converged slower than the one before.
func (s *scaleHost) forget(tb testing.TB) {
	tb.Helper()
	resp, err := s.client.Delete(s.ctx, s.store.Prefix()+"/", clientv3.WithPrefix())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.client.Compact(s.ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		tb.Fatal(err)
	}
}

// statusTally notes when every controller of a set had a status that done
// accepts, for a spec at least as new as the one it was given.
type statusTally struct {
	done chan struct{}
	at   time.Time
}

// watchStatuses watches the statuses of the controllers of revs. The watch
// is in place when it returns, and ends once every status is as awaited,
// or with the benchmark: a watch left open after its tally, which no one
// reads, would have the client buffer every later status write for it
// (at a probe each, hundreds of them through a rollout, gigabytes).
func watchStatuses(tb testing.TB, s *scaleHost, revs map[string]int64, done func(*api.ReplicationControllerStatus) bool) *statusTally {
	tb.Helper()
	prefix := s.store.StatusPrefix()
	ctx, cancel := context.WithCancel(s.ctx)
	watch := s.client.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp, ok := <-watch; !ok || !resp.Created {
		cancel()
		tb.Fatalf("watch statuses: %v", resp.Err())
	}
	t := &statusTally{done: make(chan struct{})}
	go func() {
		defer cancel()
		met := make(map[string]bool, len(revs))
		for resp := range watch {
			at := time.Now()
			for _, ev := range resp.Events {
				id := strings.TrimPrefix(string(ev.Kv.Key), prefix)
				rev, ok := revs[id]
				if !ok || ev.Type != clientv3.EventTypePut {
					continue
				}
				st, err := api.DecodeStatus(ev.Kv.Value)
				met[id] = err == nil && st.ObservedRevision >= rev && done(st)
				if !met[id] {
					delete(met, id)
				}
			}
			if len(met) == len(revs) {
				t.at = at
				close(t.done)
				return
			}
		}
	}()
	return t
}

func (t *statusTally) wait(tb testing.TB) time.Time {
	tb.Helper()
	select {
	case <-t.done:
		return t.at
	case <-time.After(scaleTimeout):
		tb.Fatalf("not every status as awaited within %s", scaleTimeout)
	case <-tb.Context().Done():
		tb.Fatal(tb.Context().Err())
	}
	return time.Time{}
}

// syncs is how many syncs the node has finished, whatever their result.
func (s *scaleHost) syncs(tb testing.TB) uint64 {
	tb.Helper()
	n, err := s.countSyncs()
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// syncCount is syncs for a goroutine of the benchmark: 0 when the metrics
// do not gather.
func (s *scaleHost) syncCount() uint64 {
	n, _ := s.countSyncs()
	return n
}

func (s *scaleHost) countSyncs() (uint64, error) {
	families, err := s.reg.Gather()
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, f := range families {
		if f.GetName() == "replication_manager_sync_duration_seconds" {
			for _, m := range f.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n, nil
}

// dockerLists is how many container lists the node has asked of its task
// control (replication_manager_docker_calls_total{operation="list"}).
func (s *scaleHost) dockerLists(tb testing.TB) float64 {
	tb.Helper()
	families, err := s.reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "replication_manager_docker_calls_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == "list" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// revision is etcd's current revision, which every write moves; the
// benchmark's prefix has no other writer, and the package's tests do not
// run meanwhile.
func (s *scaleHost) revision(tb testing.TB) int64 {
	tb.Helper()
	resp, err := s.client.Get(s.ctx, "rm-bench-revision", clientv3.WithCountOnly())
	if err != nil {
		tb.Fatal(err)
	}
	return resp.Header.Revision
}

// waitQuiet waits until, for quietFor, no sync of the node has finished
// and nothing was written to etcd.
func (s *scaleHost) waitQuiet(tb testing.TB) {
	tb.Helper()
	syncs, rev := s.syncs(tb), s.revision(tb)
	testpoll.Until(tb, scaleTimeout, "a quiet host", func() bool {
		time.Sleep(quietFor)
		n, r := s.syncs(tb), s.revision(tb)
		quiet := n == syncs && r == rev
		syncs, rev = n, r
		return quiet
	})
}

// waitRolledOut waits until every status, the probes' too, records its
// rollout as complete (Rollout.CompletedHash), then until the host is
// quiet: the record is written once a new controller's containers have
// run ready for the monitor window, after Progressing says
// RolloutComplete, so a period measured before that counts the writes of
// the controllers created just before it.
func (s *scaleHost) waitRolledOut(tb testing.TB) {
	tb.Helper()
	testpoll.Until(tb, scaleTimeout, "every rollout complete", func() bool {
		statuses, err := s.store.ListStatuses(s.ctx)
		if err != nil {
			tb.Fatal(err)
		}
		for _, st := range statuses {
			if r := st.Rollout; r == nil || r.CompletedHash == "" || r.CompletedHash != r.TargetHash {
				return false
			}
		}
		return len(statuses) > 0
	})
	s.waitQuiet(tb)
}

// resync is the node's full resync: its Resync lists the containers and
// queues every controller; it is over once every controller has synced.
func (s *scaleHost) resync(tb testing.TB) {
	tb.Helper()
	before := s.syncs(tb)
	if err := s.h.rm.Resync(s.ctx); err != nil {
		tb.Fatal(err)
	}
	testpoll.Until(tb, scaleTimeout, "every controller synced", func() bool { return s.syncs(tb) >= before+uint64(s.rc) })
}

// probe writes a new controller of one replica and returns the time from
// the write until the fake's first create of it, and until its status
// said its replica was ready.
func (s *scaleHost) probe(tb testing.TB) (toCreate, toStatus time.Duration) {
	tb.Helper()
	s.probes++
	id := fmt.Sprintf("probe-%06d", s.probes)
	// a new controller has no older status: any that says ready is its
	ready := watchStatuses(tb, s, map[string]int64{id: 0}, func(st *api.ReplicationControllerStatus) bool { return st.ReadyReplicas == 1 })
	start := time.Now()
	if _, err := s.store.CreateController(s.ctx, newController(id, 1)); err != nil {
		tb.Fatal(err)
	}
	select {
	case at := <-s.creates.probe:
		toCreate = at.Sub(start)
	case <-time.After(30 * time.Second):
		tb.Fatalf("probe %s: no create within 30s", id)
	}
	// the next probe waits for this one's status, so that probes do not
	// queue behind each other
	return toCreate, ready.wait(tb).Sub(start)
}

// percentile is the p-th percentile of ds, in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, int(float64(len(s))*p/100))
	return float64(s[i]) / float64(time.Millisecond)
}

// selfCPU is the process's user and system time so far.
func selfCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHost is one host of controllers × replicas on the fake: its
// first convergence, then, on the converged host, the node's full resync,
// a new controller's first create (alone, and while resyncs run back to
// back), a steady sync period, and a restart of both roles with every
// status due.
func BenchmarkHost(b *testing.B) {
	controllers, replicas := benchenv.Int(b, "RM_BENCH_CONTROLLERS", 10000), benchenv.Int(b, "RM_BENCH_REPLICAS", 10)
	owner := b
	var s *scaleHost
	defer func() {
		if s != nil {
			s.stop(b)
			s.forget(b)
		}
	}()
	// converged is the host of the last convergence, or a new one when
	// -bench left the convergence out
	converged := func(b *testing.B) *scaleHost {
		b.Helper()
		if s == nil {
			s, _, _ = convergeHost(b, owner, nil, controllers, replicas)
		}
		return s
	}
	name := fmt.Sprintf("controllers=%d/replicas=%d", controllers, replicas)

	// the first convergence: the leader assigns every slot, the node
	// creates them and reports, the leader writes every status
	b.Run(name+"/converge", func(b *testing.B) {
		var containers, statuses time.Duration
		for b.Loop() {
			if s != nil {
				s.stop(b)
				s.forget(b)
			}
			var c, st time.Duration
			s, c, st = convergeHost(b, owner, nil, controllers, replicas)
			containers, statuses = containers+c, statuses+st
		}
		b.ReportMetric(containers.Seconds()/float64(b.N), "containers-sec/op")
		b.ReportMetric(statuses.Seconds()/float64(b.N), "statuses-sec/op")
	})
	// a full resync of the node alone with nothing to change: target ≤ 1 s
	// at 10,000 × 10; its CPU, and its container lists (none within
	// --relist-period)
	b.Run(name+"/resync", func(b *testing.B) {
		s := converged(b)
		var cpu time.Duration
		var lists float64
		for b.Loop() {
			used, listed := selfCPU(b), s.dockerLists(b)
			s.resync(b)
			cpu, lists = cpu+selfCPU(b)-used, lists+s.dockerLists(b)-listed
		}
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-sec/op")
		b.ReportMetric(lists/float64(b.N), "docker-lists/op")
		s.waitQuiet(b)
	})
	// a new controller's spec write until its first create: target p99 ≤
	// 10 ms; until its status says ready
	b.Run(name+"/first-create", func(b *testing.B) {
		s := converged(b)
		var creates, statuses []time.Duration
		for b.Loop() {
			c, st := s.probe(b)
			creates, statuses = append(creates, c), append(statuses, st)
		}
		b.ReportMetric(percentile(creates, 50), "create-p50-ms")
		b.ReportMetric(percentile(creates, 99), "create-p99-ms")
		b.ReportMetric(percentile(statuses, 99), "status-p99-ms")
	})
	// the same while the node's full resyncs run back to back: target
	// p99 ≤ 50 ms
	b.Run(name+"/first-create-during-resyncs", func(b *testing.B) {
		s := converged(b)
		ctx, stop := context.WithCancel(s.ctx)
		var wg sync.WaitGroup
		wg.Go(func() { // each resync until every controller has synced
			for ctx.Err() == nil {
				before := s.syncCount()
				if s.h.rm.Resync(ctx) != nil {
					return
				}
				for ctx.Err() == nil && s.syncCount() < before+uint64(s.rc) {
					time.Sleep(time.Millisecond)
				}
			}
		})
		var creates []time.Duration
		for b.Loop() {
			c, _ := s.probe(b)
			creates = append(creates, c)
		}
		stop()
		wg.Wait()
		b.ReportMetric(percentile(creates, 50), "create-p50-ms")
		b.ReportMetric(percentile(creates, 99), "create-p99-ms")
		s.waitQuiet(b)
	})
	// one sync period of a host with nothing to change, started as the
	// roles' tickers start one: target ≤ 10 etcd writes, ≤ 0.2 s of CPU
	// (the process's: the host's, the fake's, the embedded etcd's), and no
	// container list within --relist-period
	b.Run(name+"/steady-period", func(b *testing.B) {
		s := converged(b)
		s.waitRolledOut(b) // the probes' rollouts end a monitor window after they are ready
		// the first pass after the convergence syncs and decides every
		// controller in full (the last decision of each wrote its status);
		// the periods after it are the steady ones
		s.h.sched.Synchronize()
		if err := s.h.rm.Resync(s.ctx); err != nil {
			b.Fatal(err)
		}
		s.waitQuiet(b)
		period := benchenv.Duration(b, "RM_BENCH_PERIOD", registry.DefaultSyncPeriod)
		var writes int64
		var cpu time.Duration
		var lists float64
		for b.Loop() {
			rev, used, listed, start := s.revision(b), selfCPU(b), s.dockerLists(b), time.Now()
			s.h.sched.Synchronize()
			if err := s.h.rm.Resync(s.ctx); err != nil {
				b.Fatal(err)
			}
			time.Sleep(time.Until(start.Add(period)))
			writes, cpu, lists = writes+s.revision(b)-rev, cpu+selfCPU(b)-used, lists+s.dockerLists(b)-listed
		}
		b.ReportMetric(float64(writes)/float64(b.N), "etcd-writes/op")
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-sec/op")
		b.ReportMetric(lists/float64(b.N), "docker-lists/op")
	})
	// a restart of both roles with every status deleted: the node lists,
	// syncs and reports every controller, the leader writes every status
	b.Run(name+"/restart", func(b *testing.B) {
		s := converged(b)
		for b.Loop() {
			b.StopTimer()
			s.stop(b)
			if _, err := s.client.Delete(s.ctx, s.store.StatusPrefix(), clientv3.WithPrefix()); err != nil {
				b.Fatal(err)
			}
			all, err := s.client.Get(s.ctx, s.store.ControllersPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
			if err != nil {
				b.Fatal(err)
			}
			revs := make(map[string]int64, len(all.Kvs))
			for _, kv := range all.Kvs {
				revs[strings.TrimPrefix(string(kv.Key), s.store.ControllersPrefix())] = kv.ModRevision
			}
			written := watchStatuses(b, s, revs, func(*api.ReplicationControllerStatus) bool { return true })
			b.StartTimer()
			startScaleHost(b, s)
			written.wait(b)
			b.StopTimer()
			s.waitQuiet(b)
			b.StartTimer()
		}
	})
}

// BenchmarkHostRollout is a rolling update of every controller of a
// converged host (RM_BENCH_ROLLOUT_CONTROLLERS × RM_BENCH_REPLICAS, default
// 1,000 × 10): a new image in every spec at once, the default strategy,
// until every status says every replica is updated and ready. New
// controllers are written one after the other meanwhile; their first
// creates are the target: p99 ≤ 10 ms. etcd-writes/op is how far etcd's
// revision moved over the rollout, the probes' writes included: the load
// the probes' own writes wait behind.
func BenchmarkHostRollout(b *testing.B) {
	controllers, replicas := benchenv.Int(b, "RM_BENCH_ROLLOUT_CONTROLLERS", 1000), benchenv.Int(b, "RM_BENCH_REPLICAS", 10)
	b.Run(fmt.Sprintf("controllers=%d/replicas=%d", controllers, replicas), func(b *testing.B) {
		s, _, _ := convergeHost(b, b, nil, controllers, replicas)
		defer func() { s.stop(b); s.forget(b) }()
		var creates []time.Duration
		var writes int64
		round := 0
		for b.Loop() {
			round++
			before := s.revision(b)
			image := fmt.Sprintf("demo-task:rollout-%d", round)
			revs := putControllers(b, s.ctx, s.client, s.store, controllers, func(i int) *api.ReplicationController {
				rc := newController(scaleID(i), replicas)
				rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = image
				return rc
			})
			done := watchStatuses(b, s, revs, func(st *api.ReplicationControllerStatus) bool {
				return st.Replicas == replicas && st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas
			})
			for {
				select {
				case <-done.done:
				default:
					c, _ := s.probe(b)
					creates = append(creates, c)
					continue
				}
				break
			}
			writes += s.revision(b) - before
			b.StopTimer()
			s.waitQuiet(b)
			b.StartTimer()
		}
		b.ReportMetric(percentile(creates, 50), "create-p50-ms")
		b.ReportMetric(percentile(creates, 99), "create-p99-ms")
		b.ReportMetric(float64(len(creates))/float64(b.N), "probes/op")
		b.ReportMetric(float64(writes)/float64(b.N), "etcd-writes/op")
	})
}
