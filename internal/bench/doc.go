// Package bench is `make bench`: it measures the replication manager against
// the best the same machine can do (the Docker Engine driven directly, and
// Swarm where it starts), in the same run, against the in-memory fake at
// scale, and the leader's scheduler over simulated nodes, then prints a
// table and writes it to docs/BENCHMARKS.md and a raw results file.
// cmd/rm-bench is its thin main.
package bench
