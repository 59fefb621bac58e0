package bench

// This file is the cost-of-failure part: a controller of a missing image
// with many replicas, and how many create calls the daemon makes in the
// first minute. A failed create of a missing image makes no Docker event,
// so the daemon's own counters are read from its /metrics: the creates,
// and every task-control call (an image check is no create, but a cost).

import (
	"context"
	"fmt"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// failurePart is a missing-image controller being counted.
type failurePart struct {
	e               *dockerEnv
	id              string
	res             FailureResult
	start           time.Time
	baseErr, baseOK float64
	baseCalls       map[string]float64
}

// startFailure writes the controller and returns at once: the window runs
// while other parts are measured, and finish waits for its end.
func (e *dockerEnv) startFailure(ctx context.Context, replicas int, window time.Duration) (*failurePart, error) {
	p := &failurePart{
		e:   e,
		id:  "rmbench-" + e.runID + "-missing",
		res: FailureResult{Image: "rmbench-missing-" + e.runID + ":latest", Replicas: replicas, Window: window},
	}
	var err error
	if p.baseErr, p.baseOK, err = e.createCounts(ctx); err != nil {
		return nil, err
	}
	if p.baseCalls, err = e.dockerCalls(ctx); err != nil {
		return nil, err
	}
	p.start = time.Now()
	if _, err := e.daemon.store.CreateController(ctx, newController(p.id, p.res.Image, replicas, e.runLabels("manager"))); err != nil {
		return nil, fmt.Errorf("missing image: %w", err)
	}
	fmt.Fprintf(e.progress, "missing image: %d replicas of %s, counting creates for %s\n", replicas, p.res.Image, window)
	return p, nil
}

// finish waits for the end of the window, reads the counters and the
// status, and deletes the controller.
func (p *failurePart) finish(ctx context.Context) (*FailureResult, error) {
	if err := sleepCtx(ctx, time.Until(p.start.Add(p.res.Window))); err != nil {
		return nil, err
	}
	errs, oks, err := p.e.createCounts(ctx)
	if err != nil {
		return nil, err
	}
	p.res.CreateErrors = int(errs - p.baseErr)
	p.res.CreateSuccesses = int(oks - p.baseOK)
	calls, err := p.e.dockerCalls(ctx)
	if err != nil {
		return nil, err
	}
	p.res.DockerCalls = make(map[string]float64)
	for op, v := range calls {
		if d := v - p.baseCalls[op]; d > 0 {
			p.res.DockerCalls[op] = d
		}
	}
	st, err := p.e.daemon.store.GetStatus(ctx, p.id)
	if err != nil {
		return nil, fmt.Errorf("missing image: %w", err)
	}
	if c := st.FindCondition(api.ConditionReplicaFailure); c != nil {
		p.res.Condition = c.Reason + ": " + c.Message
	} else {
		p.res.Condition = "none"
	}
	if err := p.e.daemon.store.DeleteController(ctx, p.id); err != nil {
		return nil, fmt.Errorf("missing image: %w", err)
	}
	fmt.Fprintf(p.e.progress, "missing image: %d failed and %d successful creates in %s\n", p.res.CreateErrors, p.res.CreateSuccesses, p.res.Window)
	return &p.res, nil
}

// createCounts reads the daemon's create counters.
func (e *dockerEnv) createCounts(ctx context.Context) (errs, oks float64, err error) {
	text, err := e.daemon.metrics(ctx)
	if err != nil {
		return 0, 0, err
	}
	const name = "replication_manager_containers_total"
	errs, _ = metricValue(text, name, map[string]string{"operation": "create", "result": "error"})
	oks, _ = metricValue(text, name, map[string]string{"operation": "create", "result": "success"})
	return errs, oks, nil
}
