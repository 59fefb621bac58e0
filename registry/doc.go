// Package registry is the etcd store of the replication manager: the keys
// under /registry (specs, statuses, history, events, nodes, assignments,
// reports), one list-then-watch loop that mirrors a prefix (mirror.go),
// the specs its mirrors decode once and share (specshare.go), the
// leader's guarded and batched writes, and one way of retrying etcd
// (retry.go). It decides nothing; the leader (package leader) and the
// node agent (package agent) build on it, and rcctl reads and writes
// through it.
package registry
