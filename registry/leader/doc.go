// Package leader is the loop that decides replicas: the 2014
// ReplicationManager, run by the one manager that wins the leader's
// election. It mirrors the specs, nodes, assignments and nodes' reports
// (WatchControllers and its siblings); the mirrors decode in goroutines of
// their own and send each change to the loop, which alone holds the
// leader's state (no lock guards it). The loop decides one controller at
// a time from a work queue (syncReplicationController, through the pure
// package decide), hands each decision's write (assignments and one status
// per controller) to the batchers without waiting, applies the answer
// when it comes back, and runs Synchronize every period as the safety
// net. It runs only as that loop (Run), from the first read of etcd on,
// on the clock of Options.Clock: what is asked from outside (NodeStats,
// Synchronize, CaughtUp, which tells a caller that the leader has acted on
// everything etcd held) runs on it, and tests drive the same Run with a
// clock they move. The dry run plans with the
// same code. Besides the decisions, the leader records each node it sees
// go, with the containers its last reports listed (leadergone.go), and
// the moves of a gone node's slots as events (leaderevents.go).
package leader
