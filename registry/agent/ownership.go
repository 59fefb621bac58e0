package agent

// This file is the one ownership rule. Every path that decides whether a
// container is a controller's (the sync, the container cache's queueing,
// the orphan sweep, the cascade) asks claimOf, so that the rule cannot
// drift between them (docs/CONTRACT.md, Containers).

import "github.com/replication-manager/replication-manager/api"

// claim is how a controller of this registry stands to one container.
type claim int

const (
	// claimNone: another registry's container, or another controller's. It
	// is never counted, replaced or deleted.
	claimNone claim = iota
	// claimOutsideSet: labelled for this controller by this registry, but
	// outside its selector (the selector changed since it was made). It is
	// not counted and not touched, but it may hold one of the slot names.
	claimOutsideSet
	// claimOwned: counted, replaced and deleted by the controller.
	claimOwned
)

// claimOf applies the ownership rule, in its order:
//
//  1. the registry label: a container made by another registry's manager
//     is never ours. A container without one was made before the label
//     existed; it is ours when its controller exists in this registry,
//     which every caller has checked (it asks on behalf of one of this
//     registry's controllers).
//  2. the controller label must name the controller.
//  3. the selector must match; a nil selector (the controller is gone, so
//     is its selector: a cascade) skips this step.
func claimOf(registryID, controller string, selector, labels map[string]string) claim {
	if !api.OfRegistry(registryID, labels) {
		return claimNone
	}
	if labels[api.LabelController] != controller {
		return claimNone
	}
	if selector != nil && !api.SelectorMatches(selector, labels) {
		return claimOutsideSet
	}
	return claimOwned
}
