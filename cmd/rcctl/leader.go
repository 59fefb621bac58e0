package main

// This file tells whether a manager leads. The leader places and moves
// slots and writes every status: while none leads, what get and nodes
// print stands still. The managers say in the policy they publish whether
// they take part in the leader election (registry.Policy.Elected); when
// they do and none holds it, get and nodes say so on stderr, and nodes
// marks the manager that leads. Reading the election needs read on
// <prefix>/election/ and on the policy; without it, rcctl says nothing of
// the leader (docs/SECURITY.md).

import (
	"context"
	"fmt"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// leading is what rcctl could learn of the leader: the election identity
// of the manager that leads ("" when none does or it is not known), and
// none: the managers campaign and none holds the election.
type leading struct {
	identity string
	none     bool
}

// readLeader reads the policy and, when the managers are elected, the
// leader election.
func readLeader(ctx context.Context, cn *conn) leading {
	p, err := call(ctx, cn, func(ctx context.Context) (registry.Policy, error) { return cn.store.GetPolicy(ctx) })
	if err != nil || !p.Elected {
		return leading{} // no policy, or a lone manager that the election does not tell of
	}
	identity, err := call(ctx, cn, cn.store.Leader)
	if err != nil {
		return leading{}
	}
	return leading{identity: identity, none: identity == ""}
}

// warnLeaderless reads the leader, and says on stderr when none leads.
func (c *cli) warnLeaderless(ctx context.Context, cn *conn) leading {
	l := readLeader(ctx, cn)
	if l.none {
		fmt.Fprintf(c.stderr, "warning: no manager leads (none holds the leader election, %s): no slot is placed or moved and no status is written until one does\n", cn.store.LeaderElectionKey())
	}
	return l
}

// leads reports whether node's manager is the one that leads.
func (l leading) leads(node *api.Node) bool {
	return node != nil && l.identity != "" && node.Manager == l.identity
}
