// Package registry keeps controller specs and status in etcd and runs the
// ReplicationManager, which drives the containers of every controller
// towards its spec.
package registry
