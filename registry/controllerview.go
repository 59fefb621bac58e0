package registry

import "github.com/replication-manager/replication-manager/api"

// ControllerView is one controller as the manager sees it.
type ControllerView struct {
	ID string
	// Spec is the newest spec; nil when it does not decode (SpecErr).
	Spec     *api.ReplicationController
	SpecErr  error
	Revision int64
	// Status is the last status the manager wrote (or read at start);
	// nil before its first.
	Status *api.ReplicationControllerStatus
	// Containers are the controller's containers of this registry, by
	// name, on this manager's engine: the node Node ("" for a manager of
	// every slot).
	Containers []api.Task
	Node       string
	// Elsewhere are the reports of the other nodes that run part of the
	// controller, for readers that add them (the status page does, from
	// etcd).
	Elsewhere []api.NodeReport
	// Pulling are the slots of this node waiting for their image's pull.
	Pulling []api.PullingSlot
}
