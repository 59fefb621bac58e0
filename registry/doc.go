// Package registry keeps controller specs and status in etcd and runs the
// ReplicationManager, which drives the containers of every controller
// towards its spec. A sync reads in two places: plan.go decides (a pure
// function of the spec, the containers, the controller's record and the
// time) and apply.go carries the decision out through the task control.
package registry
