package main

// This file holds the cap --stop-when-isolated puts on the grace period
// of every container the node stops (docs/CONTRACT.md, Stopping). An
// isolated node counts itself isolated after half its lease without a
// renewal (registry/roles, nodeAgent.isolationAfter) and promises to have removed its
// containers before the other half runs out, when the leader may start
// its slots elsewhere; a container's stop must fit in that half.

import (
	"log/slog"
	"time"
)

// isolatedStopMargin is what the cap leaves of the lease's second half
// for the engine's calls around the stop (inspect, remove).
const isolatedStopMargin = time.Second

// isolatedStopGrace is the longest grace period a node with a lease of
// ttl may give under --stop-when-isolated: half the lease less the
// margin, in whole seconds, and at least a nanosecond (a kill at once),
// since zero means no cap.
func isolatedStopGrace(ttl time.Duration) time.Duration {
	return max((ttl/2 - isolatedStopMargin).Truncate(time.Second), time.Nanosecond)
}

// maxStopGrace is the cap on every container's grace period: that of
// isolatedStopGrace under --stop-when-isolated, else none (zero).
func (o *options) maxStopGrace() time.Duration {
	if !o.StopWhenIsolated {
		return 0
	}
	return isolatedStopGrace(o.LeaderElectLeaseDuration)
}

// logStopGrace says at the start what the cap is, and whether it cuts the
// node's own default, --docker-stop-timeout.
func logStopGrace(logger *slog.Logger, o *options) {
	limit := o.maxStopGrace()
	if limit == 0 {
		return
	}
	logger.Info("--stop-when-isolated caps every container's stop grace period, so that an isolated node has removed its containers before its lease runs out",
		"maxGrace", limit, "lease", o.LeaderElectLeaseDuration, "dockerStopTimeout", o.DockerStopTimeout,
		"defaultCut", o.DockerStopTimeout > limit)
}
