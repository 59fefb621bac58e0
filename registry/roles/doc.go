// Package roles is the one composition of a replication manager: the
// node's agent (registry/agent) and the leader (registry/leader), each
// run only while this manager holds its election, the node registered
// under its term's session and its Docker calls fenced by it. The daemon
// (cmd/replication-manager), the benchmarks and the tests build a manager
// here, from one Options; they differ only in what they pass (a Docker
// client or a fake engine, the wall clock or a test's).
package roles
