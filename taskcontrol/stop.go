package taskcontrol

// This file is how a container is stopped (docs/CONTRACT.md, Stopping):
// its preStop first, within the grace period, then its stop signal with
// what is left of the grace, after which the engine kills it. Docker and
// the fake run the same sequence; only the hooks differ.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// stopPlan is how one container is stopped.
type stopPlan struct {
	// Signal is the stop signal; "" is the container's own (SIGTERM for a
	// container the manager made; the image's STOPSIGNAL, else SIGTERM, for
	// one made before stopSignal was recorded).
	Signal string
	// Grace is the time from the start of the stop to the kill.
	Grace time.Duration
	// PreStop runs first; nil for none.
	PreStop *api.PreStop
}

// stopHooks are the side effects of a stop.
type stopHooks struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// exec runs cmd in the container and waits for it to end.
	exec func(ctx context.Context, cmd []string) error
	// signal sends the stop signal and waits at most remaining for the
	// container to stop before it is killed.
	signal func(ctx context.Context, signal string, remaining time.Duration) error
}

// stopGracefully runs the plan: the preStop, cut at the grace period, then
// the stop signal with the rest of it. It returns the preStop's failure
// (wrapping api.ErrPreStopFailed) apart from the stop's, since a failed
// preStop does not hold the stop back.
func stopGracefully(ctx context.Context, p stopPlan, h stopHooks) (preStopErr, stopErr error) {
	start := h.now()
	if p.PreStop != nil && p.Grace > 0 {
		hookCtx, cancel := context.WithTimeout(ctx, p.Grace)
		var err error
		if len(p.PreStop.Exec) > 0 {
			err = h.exec(hookCtx, p.PreStop.Exec)
		} else {
			err = h.sleep(hookCtx, min(time.Duration(p.PreStop.SleepSeconds)*time.Second, p.Grace))
		}
		if err != nil && hookCtx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("outlasted the grace period of %s", p.Grace)
		}
		cancel()
		if err != nil {
			preStopErr = fmt.Errorf("%w (%s): %w", api.ErrPreStopFailed, p.PreStop, err)
		}
	}
	remaining := max(p.Grace-h.now().Sub(start), 0)
	return preStopErr, h.signal(ctx, p.Signal, remaining)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// capGrace caps a grace period at limit; a limit of zero or less caps
// nothing.
func capGrace(grace, limit time.Duration) time.Duration {
	if limit > 0 && grace > limit {
		return limit
	}
	return grace
}

// wholeSeconds is d in whole seconds, as the engine takes timeouts,
// rounded down so that a stop never outlasts its grace period.
func wholeSeconds(d time.Duration) int {
	return int(d / time.Second)
}

// preStopLabel is the label value that carries a container's preStop from
// its create to its delete: its JSON; "" for none.
func preStopLabel(p *api.PreStop) string {
	if p == nil {
		return ""
	}
	data, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("taskcontrol: encode preStop: %v", err)) // strings and integers only
	}
	return string(data)
}

// preStopOfLabels reads the preStop a container's labels carry; nil for
// none or a label that does not decode (someone else's).
func preStopOfLabels(labels map[string]string) *api.PreStop {
	v, ok := labels[api.LabelPreStop]
	if !ok || v == "" {
		return nil
	}
	var p api.PreStop
	if err := json.Unmarshal([]byte(v), &p); err != nil || (len(p.Exec) == 0 && p.SleepSeconds <= 0) {
		return nil
	}
	return &p
}

// errExecFailed is a preStop exec's non-zero exit.
var errExecFailed = errors.New("exited non-zero")
