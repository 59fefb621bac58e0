// Package leader is the loop that decides replicas: the 2014
// ReplicationManager, run by the one manager that wins the leader's
// election. It mirrors the specs, nodes, assignments and nodes' reports
// (WatchControllers and its siblings), decides one controller at a time
// from a work queue (syncReplicationController, through the pure package
// decide), writes each decision as assignments and one status per
// controller, and runs Synchronize every period as the safety net. The
// dry run plans with the same code.
package leader
