// Package bench is the side-by-side of `make bench-docker`: it measures the
// replication manager (the real daemon, bin/replication-manager) against
// the best the same machine can do, in the same run: the Docker Engine
// driven directly, and Swarm where it starts. It prints a table of each
// figure against its target and writes every sample as JSON. cmd/rm-bench
// is its thin main. The control plane at scale is not here: it is the Go
// benchmarks of registry/agent and registry/leader (`make bench`).
package bench
