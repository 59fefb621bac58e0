// Package e2e runs the built programs end to end: the replication-manager
// daemon with its embedded etcd against the real Docker Engine, driven by
// rcctl, with the demo workload image built FROM scratch.
package e2e
