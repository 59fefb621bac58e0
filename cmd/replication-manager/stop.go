package main

// This file holds the deadlines of the stop. SIGTERM (or SIGINT) must end
// the daemon within 10s, the time `docker stop` gives a container before
// it kills it, even when etcd cannot be reached: with etcd away an etcd
// call does not fail, it waits for a connection, so every call of the stop
// path has a deadline of its own, derived with context.WithoutCancel where
// the stop has already cancelled its parent.
//
// After ctx ends, with the defaults, the longest path is the node's role
// (leader.go, node.go), then serve's own closes (serve.go):
//
//	the node's manager drains its syncs  --shutdown-grace-period  4s   (defaultShutdownGracePeriod)
//	  then flushes its queued events     managerStopSlack         1s   (waited for no longer: events are best-effort)
//	resign and revoke the lease          handoverTimeout          2s   (one deadline for both)
//	close the etcd client                                         0s   (local: no call to etcd)
//	close the embedded etcd              embeddedCloseTimeout     1.5s (only without --etcd-servers)
//	                                                              ----
//	                                                              8.5s, under 10s
//
// In parallel with it: the leader's role (its scheduler stops at once,
// then the same handoverTimeout) and the HTTP server (httpShutdownTimeout,
// 5s). A larger --shutdown-grace-period makes the stop longer by as much:
// that is the operator's choice.
//
// Under --stop-when-isolated, the removal of an isolated node's containers
// (removeContainers) is not cut by the stop: it is what keeps a slot from
// running twice. The stop waits for it within the same bound as for the
// manager, then hands over without it.

import (
	"time"

	"github.com/replication-manager/replication-manager/registry/agent"
)

const (
	// defaultShutdownGracePeriod is --shutdown-grace-period's default:
	// how long syncs in progress may go on after SIGTERM. A create or a
	// start takes well under a second; a sync stuck on an etcd that does
	// not answer would use all of it.
	defaultShutdownGracePeriod = 4 * time.Second
	// managerStopSlack is how long a node's term waits for its manager
	// beyond the drain: after its workers have stopped, the manager
	// flushes its queued events with one etcd write of up to
	// registry.DefaultEtcdTimeout. Past the slack the term hands over
	// without it; its Docker calls are fenced off by then.
	managerStopSlack = time.Second
	// handoverTimeout bounds the end of a term: the resign and the revoke
	// of the session's lease together. With etcd answering each takes a
	// round trip; with etcd away neither can succeed, waiting longer does
	// not help, and the lease runs out by itself within the TTL.
	handoverTimeout = 2 * time.Second
	// httpShutdownTimeout bounds the HTTP server's shutdown; requests in
	// progress are cut at the stop (their context ends), so it is rarely
	// used up.
	httpShutdownTimeout = 5 * time.Second
	// embeddedCloseTimeout bounds the wait for the embedded etcd's close.
	// etcd gives the gRPC streams of other clients (a standby manager's
	// watches, an rcctl) its request timeout (7s) to end; the daemon exits
	// before that. etcd's data survives that as it survives a crash: its
	// write-ahead log is synced before any write is acknowledged.
	embeddedCloseTimeout = 1500 * time.Millisecond
)

// stopBudget is what the stop may take with the defaults: the sum above.
// TestStopDeadlinesStayUnderTenSeconds keeps it under 10s.
const stopBudget = defaultShutdownGracePeriod + managerStopSlack + handoverTimeout + embeddedCloseTimeout

// drainTimeout is how long the node's manager drains its syncs for grace
// (--shutdown-grace-period): the registry takes 0 as its own default.
func drainTimeout(grace time.Duration) time.Duration {
	if grace <= 0 {
		return agent.DefaultDrainTimeout
	}
	return grace
}

// waitAfterStop waits until done is closed; once stopped is closed it
// waits at most after more. It reports whether done was closed.
func waitAfterStop(stopped, done <-chan struct{}, after time.Duration) bool {
	select {
	case <-done:
		return true
	case <-stopped:
	}
	timer := time.NewTimer(after)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}
