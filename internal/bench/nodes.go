package bench

// This file runs the nodes part: the leader's scheduler over simulated
// nodes, on a real etcd embedded in this process. The nodes are
// registrations (api.Node under a lease each, as a node's acting manager
// writes them) and the reports such a manager writes back once slots are
// assigned to it (nodes_reports.go: the slots it runs and a running
// container of each), with no manager and no container behind them; the
// scheduler runs alone in a nodes-worker subprocess (nodes_worker.go), so
// that its memory and its CPU profiles are its own. One watch on the
// registry prefix, here, sees every write the scheduler makes, and times
// three things against their targets:
//
//  1. the first assignment: from the scheduler's start, with every spec
//     and node in etcd, until every slot's assignment key exists;
//  2. the reassignment of a dead node: from the revoke of the busiest
//     node's lease until every slot it held is put on another node, with
//     the grace (NodeGrace) in the figure;
//  3. the steady state: the assignment writes over a few sync periods
//     once everything has converged, when each period makes the scheduler
//     decide every controller again (a pass that changes nothing writes
//     nothing, so its passes are counted by the clock, and its cost read
//     from the worker's CPU time).
//
// The first two are taken on a scheduler whose sync period is an hour, so
// that no periodic pass runs meanwhile; the third on a second scheduler
// started on the same etcd (a new leader), of the short sync period, which
// then also times one more dead node while its periodic passes run.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

const (
	// nodesPrefix is the registry prefix of the part.
	nodesPrefix = "/rm-bench/nodes"
	// nodeLeaseTTL is the simulated nodes' lease; each is kept alive
	// until it is revoked or the part ends.
	nodeLeaseTTL = 30
	// nodesQuiet is how long the scheduler may write nothing before it
	// counts as idle.
	nodesQuiet = 500 * time.Millisecond
	// nodesTimeout bounds every wait of the part.
	nodesTimeout = 5 * time.Minute
	// nodesWorkerTimeout bounds the answer to one command.
	nodesWorkerTimeout = time.Minute
)

// nodesIdleSyncPeriod is the first scheduler's SyncPeriod: long enough
// that no periodic pass runs while the first assignment and the
// reassignment are timed.
const nodesIdleSyncPeriod = time.Hour

// nodesPart is one run of the part.
type nodesPart struct {
	cfg      Config
	self     string
	etcdURL  string
	runDir   string
	progress io.Writer
	client   *clientv3.Client
	store    *registry.Store
	tally    *assignmentTally
	activity *prefixActivity
	reports  *simReports
	names    []string
	leases   map[string]clientv3.LeaseID
	dead     map[string]bool
	log      func(format string, args ...any)
}

// runNodes measures the part on an etcd of its own, removed at the end.
func runNodes(ctx context.Context, cfg Config, runDir string, progress io.Writer) (res *NodesResult, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("nodes: find this program: %w", err)
	}
	etcd, err := startEtcd()
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	defer func() { err = errors.Join(err, etcd.Close()) }()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("nodes: etcd client: %w", err)
	}
	defer client.Close()

	store := registry.NewStore(client, nodesPrefix)
	p := &nodesPart{
		cfg: cfg, self: self, etcdURL: etcd.ClientURL, runDir: runDir, progress: progress,
		client: client, store: store, tally: newAssignmentTally(),
		activity: &prefixActivity{},
		leases:   map[string]clientv3.LeaseID{}, dead: map[string]bool{},
		log: func(format string, args ...any) { fmt.Fprintf(progress, "  nodes: %s\n", fmt.Sprintf(format, args...)) },
	}
	p.reports = newSimReports(client, store, p.log)
	res = &NodesResult{
		Controllers: cfg.NodesControllers, Replicas: cfg.ScaleReplicas, Nodes: cfg.NodesCount, Reports: cfg.NodesReports,
		NodeGrace: cfg.NodesGrace, SyncPeriod: cfg.NodesSyncPeriod, IdleSyncPeriod: nodesIdleSyncPeriod,
		Profiles: map[string]string{},
	}
	partCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := p.setup(partCtx, res); err != nil {
		return res, err
	}
	if err := p.watch(partCtx); err != nil {
		return res, err
	}
	if cfg.NodesReports {
		go p.reports.run(partCtx)
	}
	err = p.withWorker(partCtx, nodesIdleSyncPeriod, "first", func(w *nodesWorker) error {
		res.Profiles["first"] = w.firstProfile
		return p.measureIdle(partCtx, w, res)
	})
	if err != nil {
		return res, err
	}
	return res, p.withWorker(partCtx, cfg.NodesSyncPeriod, "restart", func(w *nodesWorker) error {
		res.Profiles["restart"] = w.firstProfile
		return p.measureSteady(partCtx, w, res)
	})
}

// withWorker runs fn with a scheduler subprocess of syncPeriod, whose
// profile from the start is named first, and stops it after.
func (p *nodesPart) withWorker(ctx context.Context, syncPeriod time.Duration, first string, fn func(*nodesWorker) error) error {
	w, err := startNodesWorker(ctx, p.self, []string{
		"--etcd", p.etcdURL, "--prefix", nodesPrefix, "--profile-dir", p.runDir, "--first-profile", first,
		"--node-grace", p.cfg.NodesGrace.String(), "--sync-period", syncPeriod.String(),
	}, p.progress)
	if err != nil {
		return err
	}
	return errors.Join(fn(w), w.stop())
}

// taskReserve is what each simulated task asks for, and
// simulatedCapacity each simulated node's machine: room for 2,000 such
// tasks (twice the even share of 100,000 over 100 nodes), so that every
// placement weighs memory and CPU and none is refused for them.
var (
	taskReserve       = api.Resources{Memory: 32 << 20, CPU: 32}
	simulatedCapacity = api.NodeCapacity{CPUs: 64, Memory: 64 << 30}
)

// setup writes the specs and registers the nodes, each under a lease of
// its own that is kept alive.
func (p *nodesPart) setup(ctx context.Context, res *NodesResult) error {
	start := time.Now()
	err := putControllers(ctx, p.client, p.store, p.cfg.NodesControllers, func(i int) *api.ReplicationController {
		rc := newController(scaleID(i), "demo-task:latest", p.cfg.ScaleReplicas, nil)
		// every task reserves memory and CPU, so that placement checks
		// the room of each node it considers (taskReserve)
		c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
		c.Memory, c.CPU = taskReserve.Memory, taskReserve.CPU
		return rc
	})
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	res.WriteSpecs = time.Since(start)
	for i := range p.cfg.NodesCount {
		name := fmt.Sprintf("node-%03d", i)
		lease, err := p.client.Grant(ctx, nodeLeaseTTL)
		if err != nil {
			return fmt.Errorf("nodes: lease of %s: %w", name, err)
		}
		alive, err := p.client.KeepAlive(ctx, lease.ID)
		if err != nil {
			return fmt.Errorf("nodes: keep %s alive: %w", name, err)
		}
		go func() {
			for range alive { // drain, or the client complains
			}
		}()
		node := &api.Node{
			Name: name, Labels: map[string]string{"rm-bench": "simulated"}, EngineID: "rm-bench-" + name,
			Capacity: simulatedCapacity, Manager: "rm-bench",
			Lease: fmt.Sprintf("%x", int64(lease.ID)), RegisteredAt: time.Now().UTC(),
		}
		if err := p.store.RegisterNode(ctx, node, lease.ID); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
		p.names = append(p.names, name)
		p.leases[name] = lease.ID
		p.reports.addNode(name, lease.ID)
	}
	p.log("%d specs of %d replicas written in %s, %d nodes registered", p.cfg.NodesControllers, p.cfg.ScaleReplicas, fmtDuration(res.WriteSpecs), p.cfg.NodesCount)
	return nil
}

// watch follows the whole registry prefix from now on: the assignments
// into the tally, every other write (statuses, history, nodes) into the
// activity. It returns once the watch is in place.
func (p *nodesPart) watch(ctx context.Context) error {
	wc := p.client.Watch(ctx, nodesPrefix+"/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	if resp, ok := <-wc; !ok || !resp.Created {
		return fmt.Errorf("nodes: watch %s: %w", nodesPrefix, resp.Err())
	}
	assignments, statuses, nodes := p.store.AssignmentsPrefix(), p.store.StatusPrefix(), p.store.NodesPrefix()
	go func() {
		for resp := range wc {
			at := time.Now()
			var evs []assignmentEvent
			var changes []assignmentChange
			var batch activityBatch
			for _, ev := range resp.Events {
				key := string(ev.Kv.Key)
				switch {
				case strings.HasPrefix(key, assignments):
					c, ok := p.reports.parseAssignment(key, ev.Kv.Value, ev.Type == clientv3.EventTypePut)
					if !ok {
						p.log("undecodable assignment %s: %q", key, ev.Kv.Value)
						continue
					}
					e := assignmentEvent{key: key}
					if c.a != nil {
						e.node = c.a.Node
					}
					evs, changes = append(evs, e), append(changes, c)
				case strings.HasPrefix(key, nodes):
					if ev.Type == clientv3.EventTypeDelete {
						batch.gone = append(batch.gone, strings.TrimPrefix(key, nodes))
					}
				case strings.HasPrefix(key, statuses):
					batch.statuses++
				default:
					batch.others++
				}
			}
			if len(evs) > 0 {
				p.tally.apply(evs, at)
				p.reports.apply(changes, at)
			}
			batch.writes = len(evs) + batch.statuses + batch.others
			p.activity.add(batch, at)
		}
	}()
	return nil
}

// measureIdle takes the first assignment, the memory and the reassignment
// on the first scheduler.
func (p *nodesPart) measureIdle(ctx context.Context, w *nodesWorker, res *NodesResult) error {
	want := p.cfg.NodesControllers * p.cfg.ScaleReplicas
	p.tally.expectCreates(want)
	cpu0, cpuErr := selfCPU()
	var created int
	var first, at time.Time
	err := w.waitUntil(ctx, func() bool {
		created, first, at = p.tally.created()
		return !at.IsZero()
	})
	if err != nil {
		return fmt.Errorf("nodes: first assignment: %d of %d keys: %w", created, want, err)
	}
	res.FirstAssignment, res.FirstKey, res.Assignments = at.Sub(w.started), first.Sub(w.started), created
	res.SlotsPerNodeMin, res.SlotsPerNodeMax = spreadOf(p.tally.perNode(), p.names)
	p.log("first assignment: %d keys in %s, the first after %s (%d-%d slots per node)", created, fmtDuration(res.FirstAssignment),
		fmtDuration(res.FirstKey), res.SlotsPerNodeMin, res.SlotsPerNodeMax)
	// on a machine of two cores the figure is bound by the CPU of both
	// processes, which tells more than the wall time when others load it
	if cpu1, err := selfCPU(); cpuErr == nil && err == nil {
		if worker, err := w.cpu(); err == nil {
			p.log("CPU until then: the scheduler %s, this process (etcd, the simulated nodes, the watch) %s", fmtDuration(worker), fmtDuration(cpu1-cpu0))
		}
	}

	if res.Profiles["statuses"], err = w.profile("statuses"); err != nil {
		return err
	}
	if err := p.waitFirstPass(ctx, w, 0); err != nil {
		return err
	}
	if err := p.waitQuiet(ctx, w); err != nil {
		return err
	}
	res.FirstPass = p.activity.lastWrite().Sub(w.started)
	res.ReportWrites = p.reports.writeCount()
	p.log("first pass and the nodes' reports over (every status, history record and report written, then quiet) %s after the start; %d report writes",
		fmtDuration(res.FirstPass), res.ReportWrites)
	if err := w.stopProfile(); err != nil {
		return err
	}
	mem, heap, err := w.memory()
	if err != nil {
		return err
	}
	res.Memory, res.Profiles["heap"] = mem, heap
	p.log("scheduler's RSS %s (peak %s); %s after a GC", fmtBytes(mem.RSS), fmtBytes(mem.PeakRSS), fmtBytes(mem.RSSAfterGC))

	if res.Profiles["reassign"], err = w.profile("reassign"); err != nil {
		return err
	}
	if res.Reassign, err = p.reassign(ctx, w); err != nil {
		return err
	}
	if err := p.waitQuiet(ctx, w); err != nil {
		return err
	}
	return w.stopProfile()
}

// waitFirstPass waits until the scheduler has written a status for every
// controller, statuses being the count of status writes before it
// started: its first pass writes them last, in id order.
func (p *nodesPart) waitFirstPass(ctx context.Context, w *nodesWorker, statuses int) error {
	err := w.waitUntil(ctx, func() bool { return p.activity.statusCount()-statuses >= p.cfg.NodesControllers })
	if err != nil {
		return fmt.Errorf("nodes: first pass: %d of %d statuses: %w", p.activity.statusCount()-statuses, p.cfg.NodesControllers, err)
	}
	return nil
}

// waitQuiet waits until nothing has been written under the prefix for
// nodesQuiet.
func (p *nodesPart) waitQuiet(ctx context.Context, w *nodesWorker) error {
	err := w.waitUntil(ctx, func() bool { return time.Since(p.activity.lastWrite()) >= nodesQuiet })
	if err != nil {
		return fmt.Errorf("nodes: the scheduler did not go quiet: %w", err)
	}
	return nil
}

// reassign revokes the lease of the live node with the most slots and
// times until every one of them is on another node.
func (p *nodesPart) reassign(ctx context.Context, w *nodesWorker) (*NodeReassignment, error) {
	dead := busiest(p.tally.perNode())
	r := &NodeReassignment{Node: dead, Slots: p.tally.track(dead)}
	p.dead[dead] = true
	p.reports.kill(dead) // its reports go with its lease
	start := time.Now()
	if _, err := p.client.Revoke(ctx, p.leases[dead]); err != nil {
		return nil, fmt.Errorf("nodes: revoke %s: %w", dead, err)
	}
	r.RevokeCall = time.Since(start)
	var left int
	var at time.Time
	err := w.waitUntil(ctx, func() bool {
		left, at, r.Writes = p.tally.moved()
		return !at.IsZero()
	})
	if err != nil {
		return nil, fmt.Errorf("nodes: reassignment of %s: %d of %d slots still there: %w", dead, left, r.Slots, err)
	}
	r.Took = at.Sub(start)
	if gone, ok := p.activity.goneAt(dead); ok {
		r.NodeKeyGone = gone.Sub(start)
	}
	var alive []string
	for _, n := range p.names {
		if !p.dead[n] {
			alive = append(alive, n)
		}
	}
	r.AfterMin, r.AfterMax = spreadOf(p.tally.perNode(), alive)
	p.log("reassignment of %s (%d slots, grace %s): %s (node key gone after %s), %d writes; %d-%d slots per live node after", dead, r.Slots, p.cfg.NodesGrace,
		fmtDuration(r.Took), fmtDuration(r.NodeKeyGone), r.Writes, r.AfterMin, r.AfterMax)
	return r, nil
}

// measureSteady runs on the second scheduler, of SyncPeriod: once its
// mirrors are listed (the slots and reported containers its NodeStats
// counts are every slot), it counts the assignment and status writes over
// a window of at least NodesPeriods periods that holds NodesPeriods ticks
// of the sync period, each followed by 90% of a period; its first pass is
// in the window (a new leader that finds every status as it would write
// it writes nothing, so a pass cannot be told from the writes). Last, it
// revokes one more node while the periodic passes run.
func (p *nodesPart) measureSteady(ctx context.Context, w *nodesWorker, res *NodesResult) error {
	want := p.cfg.NodesControllers * p.cfg.ScaleReplicas
	var st nodesWorkerReply
	// polled gently: NodeStats is a call on the loop every decision runs on
	err := w.waitUntilEvery(ctx, 50*time.Millisecond, func() bool {
		var err error
		st, err = w.stats()
		return err == nil && st.Assigned == want && (!p.cfg.NodesReports || st.Containers == want)
	})
	if err != nil {
		return fmt.Errorf("nodes: restarted scheduler: %d slots assigned and %d containers reported of %d: %w", st.Assigned, st.Containers, want, err)
	}
	start := time.Now()
	res.RestartListed = start.Sub(w.started)
	if res.Profiles["steady"], err = w.profile("steady"); err != nil {
		return err
	}
	writes0, status0 := p.tally.writeCount(), p.activity.statusCount()
	cpu0, err := w.cpu()
	if err != nil {
		return err
	}
	period := p.cfg.NodesSyncPeriod
	ticks := func(t time.Time) int { return int(t.Sub(w.started) / period) }
	// the window ends 10% of a period before the tick after the last one
	// it holds, so that the last pass had the rest of its period
	last := w.started.Add(time.Duration(ticks(start)+p.cfg.NodesPeriods) * period)
	end := last.Add(period * 9 / 10)
	if least := start.Add(time.Duration(p.cfg.NodesPeriods) * period); end.Before(least) {
		end = least
	}
	if err := sleepCtx(ctx, time.Until(end)); err != nil {
		return err
	}
	cpu1, err := w.cpu()
	if err != nil {
		return err
	}
	now := time.Now()
	res.SteadyWindow, res.SteadyPeriods, res.SteadyPasses = now.Sub(start), p.cfg.NodesPeriods, ticks(now)-ticks(start)
	res.SteadyWrites = p.tally.writeCount() - writes0
	res.SteadyStatusWrites = p.activity.statusCount() - status0
	res.SteadyCPU = cpu1 - cpu0
	p.log("restarted scheduler (SyncPeriod %s): mirrors listed %s after its start; from then, over %s (%d ticks): %d assignment writes, %d status writes; its CPU %s (%.2f cores)",
		period, fmtDuration(res.RestartListed), fmtDuration(res.SteadyWindow), res.SteadyPasses, res.SteadyWrites, res.SteadyStatusWrites,
		fmtDuration(res.SteadyCPU), res.SteadyCPU.Seconds()/res.SteadyWindow.Seconds())

	if res.Profiles["reassign-busy"], err = w.profile("reassign-busy"); err != nil {
		return err
	}
	if res.ReassignBusy, err = p.reassign(ctx, w); err != nil {
		return err
	}
	return w.stopProfile()
}

// activityBatch is what one watch response brought besides assignments.
type activityBatch struct {
	writes, statuses, others int
	gone                     []string
}

// prefixActivity counts the writes under the prefix other than the
// assignments and keeps when each node key was deleted; safe for
// concurrent use.
type prefixActivity struct {
	mu       sync.Mutex
	statuses int
	others   int
	last     time.Time
	gone     map[string]time.Time
}

func (a *prefixActivity) add(b activityBatch, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.statuses += b.statuses
	a.others += b.others
	if b.writes > 0 || len(b.gone) > 0 {
		a.last = at
	}
	for _, name := range b.gone {
		if a.gone == nil {
			a.gone = map[string]time.Time{}
		}
		a.gone[name] = at
	}
}

func (a *prefixActivity) goneAt(name string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.gone[name]
	return at, ok
}

func (a *prefixActivity) statusCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.statuses
}

func (a *prefixActivity) lastWrite() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// nodesWorker is the running subprocess.
type nodesWorker struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan nodesWorkerReply
	// exit is closed when the worker has exited, with what Wait returned
	// in exitErr.
	exit         chan struct{}
	exitErr      error
	started      time.Time
	firstProfile string
	stopOnce     sync.Once
	stopErr      error
}

// startNodesWorker starts the subprocess and waits for its first line.
func startNodesWorker(ctx context.Context, self string, args []string, progress io.Writer) (*nodesWorker, error) {
	cmd := exec.CommandContext(ctx, self, append([]string{NodesWorkerCommand}, args...)...)
	cmd.Stderr = progress
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("nodes: worker: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("nodes: worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("nodes: worker: %w", err)
	}
	w := &nodesWorker{cmd: cmd, stdin: stdin, replies: make(chan nodesWorkerReply, 1), exit: make(chan struct{})}
	first := make(chan nodesWorkerStarted, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		lines.Buffer(nil, 1<<20)
		for n := 0; lines.Scan(); n++ {
			if n == 0 {
				var s nodesWorkerStarted
				if json.Unmarshal(lines.Bytes(), &s) == nil {
					first <- s
				}
				continue
			}
			var r nodesWorkerReply
			if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
				r.Error = fmt.Sprintf("reply %q: %v", lines.Text(), err)
			}
			select {
			case w.replies <- r:
			case <-ctx.Done():
			}
		}
		// the pipe is read to its end before Wait
		w.exitErr = cmd.Wait()
		close(w.exit)
	}()
	select {
	case s := <-first:
		w.started, w.firstProfile = time.Unix(0, s.Started), s.Profile
		return w, nil
	case <-w.exit:
		return nil, fmt.Errorf("nodes: worker exited before it started: %w", w.exitErr)
	case <-time.After(nodesWorkerTimeout):
		return nil, errors.Join(errors.New("nodes: worker did not start"), w.stop())
	}
}

// exitedErr says that the worker exited, and how.
func (w *nodesWorker) exitedErr() error {
	if w.exitErr == nil {
		return errors.New("nodes: worker exited")
	}
	return fmt.Errorf("nodes: worker exited: %w", w.exitErr)
}

// call sends one command and waits for its answer.
func (w *nodesWorker) call(command string) (nodesWorkerReply, error) {
	if _, err := fmt.Fprintln(w.stdin, command); err != nil {
		return nodesWorkerReply{}, fmt.Errorf("nodes: worker %s: %w", command, err)
	}
	select {
	case r := <-w.replies:
		if r.Error != "" {
			return r, fmt.Errorf("nodes: worker %s: %s", command, r.Error)
		}
		return r, nil
	case <-w.exit:
		return nodesWorkerReply{}, fmt.Errorf("during %s: %w", command, w.exitedErr())
	case <-time.After(nodesWorkerTimeout):
		return nodesWorkerReply{}, fmt.Errorf("nodes: worker %s: no answer within %s", command, nodesWorkerTimeout)
	}
}

func (w *nodesWorker) profile(name string) (string, error) {
	r, err := w.call("profile " + name)
	return r.Profile, err
}

func (w *nodesWorker) stopProfile() error {
	_, err := w.call("stop-profile")
	return err
}

func (w *nodesWorker) memory() (*MemoryResult, string, error) {
	r, err := w.call("mem")
	return r.Memory, r.Heap, err
}

func (w *nodesWorker) cpu() (time.Duration, error) {
	r, err := w.call("cpu")
	return r.CPU, err
}

func (w *nodesWorker) stats() (nodesWorkerReply, error) {
	return w.call("stats")
}

// waitUntil is waitUntil, within nodesTimeout, polling every millisecond,
// that also gives up when the worker exits.
func (w *nodesWorker) waitUntil(ctx context.Context, cond func() bool) error {
	return w.waitUntilEvery(ctx, time.Millisecond, cond)
}

// waitUntilEvery is waitUntil polling every interval.
func (w *nodesWorker) waitUntilEvery(ctx context.Context, interval time.Duration, cond func() bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-w.exit:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := waitUntil(ctx, nodesTimeout, interval, cond)
	select {
	case <-w.exit:
		return w.exitedErr()
	default:
		return err
	}
}

// stop ends the worker's input and waits for it; it kills a worker that
// does not exit. Later calls return the same.
func (w *nodesWorker) stop() error {
	w.stopOnce.Do(func() {
		w.stdin.Close()
		select {
		case <-w.exit:
			if w.exitErr != nil {
				w.stopErr = fmt.Errorf("nodes: worker: %w", w.exitErr)
			}
		case <-time.After(nodesWorkerTimeout):
			_ = w.cmd.Process.Kill()
			<-w.exit
			w.stopErr = fmt.Errorf("nodes: worker did not stop within %s; killed", nodesWorkerTimeout)
		}
	})
	return w.stopErr
}
