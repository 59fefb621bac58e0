package main

// This file is what nodes shows of gone nodes (docs/CONTRACT.md, Nodes):
// a node whose lease is gone is listed from its record under
// /registry/gonenodes/<node>, which the leader writes, as Gone since
// when, with the containers its last reports listed (they may still run
// there: a node cut off from etcd keeps them); and nodes forget, which
// removes such a record at once.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// readGoneNodes reads the gone nodes' records. A role that may not read
// them (one made before they existed) gets none, without a word: the
// nodes are then shown as before.
func readGoneNodes(ctx context.Context, cn *conn) ([]api.GoneNode, error) {
	gone, err := call(ctx, cn, cn.store.ListGoneNodes)
	if errors.Is(err, rpctypes.ErrPermissionDenied) {
		return nil, nil
	}
	return gone, err
}

// statusCell is the STATUS cell: Ready, NotReady, or Gone with how long
// ago the node went; ",Paused" or ",Draining" after it when the node's
// config says so, as kubectl adds ",SchedulingDisabled".
func (v *nodeView) statusCell(c *cli) string {
	state := v.state()
	if v.node == nil && v.gone != nil {
		state = api.NodeGone + " " + ctlview.Age(c.now(), v.gone.GoneSince)
	}
	switch v.config.Effective() {
	case api.NodePause:
		state += ",Paused"
	case api.NodeDrain:
		state += ",Draining"
	}
	return state
}

// printGoneContainers lists, below the table, the containers each gone
// node last reported.
func (c *cli) printGoneContainers(w io.Writer, views []*nodeView) {
	for _, v := range views {
		if v.node != nil || v.gone == nil {
			continue
		}
		g := v.gone
		fmt.Fprintf(w, "\n%s gone %s ago (%s); its last containers, which may still run there:\n",
			g.Name, ctlview.Age(c.now(), g.GoneSince), g.GoneSince.UTC().Format("2006-01-02T15:04:05Z"))
		if len(g.Containers) == 0 {
			fmt.Fprintln(w, "  "+ctlview.None)
			continue
		}
		tw := newTable(w)
		row(tw, "  CONTROLLER", "NAME", "SLOT", "IMAGE", "STATE")
		for _, ct := range g.Containers {
			row(tw, "  "+ct.Controller, ct.Name, slotCell(ct.Slot), ct.Image, ctlview.OrNone(ct.State))
		}
		_ = tw.Flush()
		if g.Omitted > 0 {
			fmt.Fprintf(w, "  and %d more\n", g.Omitted)
		}
	}
}

func slotCell(slot int) string {
	if slot <= 0 {
		return ctlview.None
	}
	return strconv.Itoa(slot)
}

func (c *cli) nodesForgetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "forget NODE",
		Short: "forget a gone node and the containers it last reported",
		Long: `Forget removes the record of a gone node (its lease is gone), which rcctl nodes
and describe show with the containers the node last reported. The leader
forgets a gone node by itself a day after it went, once nothing is assigned to
it; forget does it now. It refuses a node that is registered. If the node comes
back, it is listed again as any node.`,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("nodes forget: want exactly one NODE, got %d", len(args))
			}
			return c.forgetNode(cmd.Context(), args[0])
		},
	}
}

func (c *cli) forgetNode(ctx context.Context, node string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	_, err = call(ctx, cn, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, cn.store.ForgetGoneNode(ctx, node)
	})
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return fmt.Errorf("node %q is not a gone node (rcctl nodes lists them)", node)
	case errors.Is(err, registry.ErrNodeRegistered):
		return fmt.Errorf("node %q is registered: only a gone node can be forgotten", node)
	case err != nil:
		return err
	}
	fmt.Fprintf(c.stdout, "node %q forgotten\n", node)
	return nil
}
