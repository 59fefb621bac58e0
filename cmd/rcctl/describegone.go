package main

// This file is describe's section "On gone nodes" (docs/CONTRACT.md,
// Nodes): the controller's containers that gone nodes last reported,
// from their records under /registry/gonenodes/. Their reports went with
// their leases, so the Containers table no longer shows them, but they
// may still run there (a node cut off from etcd keeps them), beside the
// slots the leader placed again elsewhere.

import (
	"context"
	"fmt"
	"io"

	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// printOnGoneNodes prints the section when a gone node last reported a
// container of controller id, and nothing otherwise. The records are
// best effort: when they cannot be read, describe goes on without them.
func (c *cli) printOnGoneNodes(ctx context.Context, cn *conn, w io.Writer, id string) {
	gone, err := readGoneNodes(ctx, cn)
	if err != nil {
		fmt.Fprintf(c.stderr, "warning: the gone nodes cannot be read: %s\n", oneLine(err))
		return
	}
	now := c.now()
	var rows [][]string
	for _, g := range gone {
		for _, ct := range g.Containers {
			if ct.Controller == id {
				rows = append(rows, []string{"  " + ct.Name, g.Name, ctlview.Age(now, g.GoneSince) + " ago", slotCell(ct.Slot), ct.Image, ctlview.OrNone(ct.State)})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "On gone nodes (their last reports; these may still run there):")
	tw := newTable(w)
	row(tw, "  NAME", "NODE", "GONE", "SLOT", "IMAGE", "STATE")
	for _, r := range rows {
		row(tw, r...)
	}
	_ = tw.Flush()
}
