package main

// delete removes a controller's spec. It does not touch containers: the
// manager sees the deletion and removes them (the cascade), and it removes
// the status too, which only the manager writes.

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/registry"
)

func (c *cli) deleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "delete a controller (the manager then removes its containers)",
		Long: `Delete removes the controller's spec from etcd. The replication manager then
removes the controller's containers and its status.`,
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("delete: want exactly one ID, got %d", len(args))
			}
			return c.delete(cmd.Context(), args[0])
		},
	}
}

func (c *cli) delete(ctx context.Context, id string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	err = cn.deleteController(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return fmt.Errorf("controller %q not found", id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "controller %q deleted (its containers will be removed by the manager)\n", id)
	return nil
}
