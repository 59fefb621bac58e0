package main

// This file holds the deadlines of the stop. SIGTERM (or SIGINT) must end
// the daemon within 10s, the time `docker stop` gives a container before
// it kills it, even when etcd cannot be reached: with etcd away an etcd
// call does not fail, it waits for a connection, so every call of the stop
// path has a deadline of its own, derived with context.WithoutCancel where
// the stop has already cancelled its parent.
//
// After ctx ends, with the defaults, the longest path is the node's role
// (registry/roles: election.go, node.go), then serve's own closes (serve.go):
//
//	the node's manager drains its syncs  --shutdown-grace-period  4s   (defaultShutdownGracePeriod)
//	  then flushes its queued events     roles.ManagerStopSlack   1s   (waited for no longer: events are best-effort)
//	resign and revoke the lease          roles.HandoverTimeout    2s   (one deadline for both)
//	close the etcd client                                         0s   (local: no call to etcd)
//	close the embedded etcd              embeddedCloseTimeout     1.5s (only without --etcd-servers)
//	                                                              ----
//	                                                              8.5s, under 10s
//
// In parallel with it: the leader's role (its scheduler stops at once,
// then the same roles.HandoverTimeout) and the HTTP server (httpShutdownTimeout,
// 5s). A larger --shutdown-grace-period makes the stop longer by as much:
// that is the operator's choice.
//
// Under --stop-when-isolated, the removal of an isolated node's containers
// (removeContainers) is not cut by the stop: it is what keeps a slot from
// running twice. The stop waits for it within the same bound as for the
// manager, then hands over without it.

import (
	"time"

	"github.com/replication-manager/replication-manager/registry/roles"
)

const (
	// defaultShutdownGracePeriod is --shutdown-grace-period's default:
	// how long syncs in progress may go on after SIGTERM. A create or a
	// start takes well under a second; a sync stuck on an etcd that does
	// not answer would use all of it.
	defaultShutdownGracePeriod = 4 * time.Second
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
const stopBudget = defaultShutdownGracePeriod + roles.ManagerStopSlack + roles.HandoverTimeout + embeddedCloseTimeout
