// Package etcdembed holds the settings the daemon's embedded etcd runs
// with, beyond its addresses and data dir, and the client the daemon's own
// roles use on it (Client). internal/etcdtest applies them to the etcd of
// every test and benchmark, so that those measure the etcd that ships.
package etcdembed

import "go.etcd.io/etcd/server/v3/embed"

// Configure sets cfg's history retention.
//
// The snapshot count stays etcd's (10,000; 5,000 entries kept after a
// snapshot). etcd holds the raft entries since its last snapshot in
// memory, about 25 MiB at 10,000 controllers of 10; a snapshot every
// 1,000 writes kept that near 4 MiB, but each snapshot commits the
// backend, and the first convergence of 10,000 × 10 took 15.3 s instead
// of 13.2 (BenchmarkHost/.../converge).
func Configure(cfg *embed.Config) {
	// status writes make revisions: keep an hour of history
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"
}
