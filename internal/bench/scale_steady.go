package bench

// This file measures one sync period of a converged host that nothing
// changes: what a steady fleet costs. The period starts as the daemon's
// timers start one, with the node's resync (a list of every container,
// every controller synced) and the leader's periodic pass (every
// controller decided again), and lasts the daemon's default sync period.
// Over it the worker counts etcd's writes (its revision: the worker's etcd
// has no other writer) and the process's CPU time, the host's and the
// fake's (which stands in for the daemon's decoding of Docker's list).

import (
	"context"
	"time"

	"github.com/replication-manager/replication-manager/registry"
)

// SteadyPeriod is one sync period of a converged host.
type SteadyPeriod struct {
	// Period is how long it lasted: the daemon's default sync period.
	Period time.Duration `json:"periodNs"`
	// Writes is how far etcd's revision moved over it.
	Writes int64 `json:"writes"`
	// CPU is the process's user and system time over it.
	CPU time.Duration `json:"cpuNs"`
	// Syncs is how many syncs the node finished over it.
	Syncs uint64 `json:"syncs"`
}

// measureSteady runs one steady sync period on m and returns what it cost.
func (w *scaleWorker) measureSteady(ctx context.Context, m *managerRun) (SteadyPeriod, error) {
	p := SteadyPeriod{Period: registry.DefaultSyncPeriod}
	before, err := m.costSoFar(ctx)
	if err != nil {
		return p, err
	}
	start := time.Now()
	// what the two roles' tickers do at the start of each period
	m.host.sched.Synchronize()
	if err := m.host.rm.Resync(ctx); err != nil {
		return p, err
	}
	select {
	case <-ctx.Done():
		return p, ctx.Err()
	case <-time.After(time.Until(start.Add(p.Period))):
	}
	after, err := m.costSoFar(ctx)
	if err != nil {
		return p, err
	}
	p.Writes, p.CPU, p.Syncs = after.rev-before.rev, after.cpu-before.cpu, after.syncs-before.syncs
	w.log("a steady period of %s: %d etcd writes, %s of CPU, %d syncs of the node", fmtPeriod(p.Period), p.Writes, fmtDuration(p.CPU), p.Syncs)
	return p, nil
}

// cost is what the host has cost so far: etcd's revision, the node's
// finished syncs and the process's CPU time.
type cost struct {
	rev   int64
	syncs uint64
	cpu   time.Duration
}

func (m *managerRun) costSoFar(ctx context.Context) (c cost, err error) {
	if c.rev, err = m.etcdRevision(ctx); err != nil {
		return c, err
	}
	if c.syncs, err = m.syncs(); err != nil {
		return c, err
	}
	c.cpu, err = selfCPU()
	return c, err
}
