// Package etcdembed holds the settings the daemon's embedded etcd runs
// with, beyond its addresses and data dir. internal/etcdtest applies them
// to the etcd of every test and benchmark, so that those measure the etcd
// that ships.
package etcdembed

import "go.etcd.io/etcd/server/v3/embed"

// Snapshot settings. etcd keeps every raft entry since its last snapshot
// in memory, and SnapshotCatchUpEntries more after one: with etcd's
// defaults (10,000 and 5,000) that is up to 15,000 writes, status and
// report values included, about 25 MiB at 10,000 controllers of 10. A
// single member has no follower to catch up, and a snapshot of the store
// is small (the keys live in the backend file): snapshotting every 1,000
// writes keeps at most 2,000.
const (
	snapshotCount          = 1000
	snapshotCatchUpEntries = 1000
)

// Configure sets cfg's history retention and snapshot frequency.
func Configure(cfg *embed.Config) {
	// status writes make revisions: keep an hour of history
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"
	cfg.SnapshotCount, cfg.SnapshotCatchUpEntries = snapshotCount, snapshotCatchUpEntries
}
