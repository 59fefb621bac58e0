package main

// scale sets the replicas of one controller. It is a read-modify-write of
// one field, so a conflict (someone changed the spec between the read and
// the write) is safe to retry: scale re-reads and applies the same change
// to the newer spec, keeping the other edit.

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// scaleAttempts bounds the read-modify-write retries on conflict.
const scaleAttempts = 3

func (c *cli) scaleCommand() *cobra.Command {
	var replicas int
	var dryRun bool
	var wait waitFlags
	cmd := &cobra.Command{
		Use:   "scale ID --replicas N",
		Short: "set the number of replicas of a controller",
		Long: `Scale sets desiredState.replicas of one controller and leaves the rest of its
spec as it is. If someone changes the spec at the same moment, scale reads it
again and retries (up to 3 times). With --wait it then shows progress until
every replica is ready or --timeout passes. With --dry-run it prints what the
registry would do to each container instead, and on which node, and writes
nothing.`,
		ValidArgsFunction: c.completeID,
		// --replicas is checked here, not marked required, so that its
		// absence is reported before a wrong argument count, as ever
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("replicas") {
				return usageErrorf("scale: --replicas is required")
			}
			if len(args) != 1 {
				return usageErrorf("scale: want exactly one ID, got %d", len(args))
			}
			if dryRun && *wait.wait {
				return usageErrorf("scale: --dry-run writes nothing to wait for; drop --wait")
			}
			if dryRun {
				return c.scaleDryRun(cmd.Context(), args[0], replicas)
			}
			return c.scale(cmd.Context(), args[0], replicas, wait)
		},
	}
	cmd.Flags().IntVar(&replicas, "replicas", 0, "the number of replicas to run (required)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, dryRunHelp)
	wait = addWaitFlags(cmd.Flags())
	return cmd
}

func (c *cli) scale(ctx context.Context, id string, replicas int, wait waitFlags) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	err = readModifyWrite(ctx, cn, id, func(rc *api.ReplicationController) error {
		rc.DesiredState.Replicas = replicas
		if err := c.validate(ctx, cn, rc, id); err != nil {
			return invalid(id, "after scaling", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "controller %q scaled to %d\n", id, replicas)
	return c.waitAfterWrite(ctx, cn, id, wait)
}

// scaleDryRun prints what scaling id to replicas would make the registry
// do to its containers, on which node; it writes nothing.
func (c *cli) scaleDryRun(ctx context.Context, id string, replicas int) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	spec, err := readForUpdate(ctx, cn, id)
	if err != nil {
		return err
	}
	// a copy to scale: the stored spec is what the dry run compares with
	data, err := api.Encode(spec.Controller)
	if err != nil {
		return fmt.Errorf("controller %q: %w", id, err)
	}
	rc, err := api.Decode(data)
	if err != nil {
		return fmt.Errorf("controller %q: %w", id, err)
	}
	rc.DesiredState.Replicas = replicas
	if err := c.validate(ctx, cn, rc, id); err != nil {
		return invalid(id, "after scaling", err)
	}
	fmt.Fprintf(c.stdout, "controller %q scaled to %d (dry run)\n", id, replicas)
	return c.dryRun(ctx, cn, rc, &spec)
}

// readForUpdate reads the spec of id for a change: one that is missing or
// does not decode is an error.
func readForUpdate(ctx context.Context, cn *conn, id string) (registry.Spec, error) {
	spec, err := cn.getController(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return spec, fmt.Errorf("controller %q not found", id)
	}
	if err != nil {
		return spec, err
	}
	if spec.Err != nil {
		return spec, fmt.Errorf("controller %q: stored spec does not decode (fix it with rcctl apply): %w", id, spec.Err)
	}
	return spec, nil
}

// readModifyWrite reads the spec of id, lets modify change it, and writes
// it back if the spec is still as read; on a conflict it starts over from a
// fresh read, up to scaleAttempts times. modify must be safe to repeat. A
// spec that modify leaves unchanged is not written.
func readModifyWrite(ctx context.Context, cn *conn, id string, modify func(rc *api.ReplicationController) error) error {
	for range scaleAttempts {
		spec, err := readForUpdate(ctx, cn, id)
		if err != nil {
			return err
		}
		before, err := api.Encode(spec.Controller)
		if err != nil {
			return fmt.Errorf("controller %q: %w", id, err)
		}
		rc := spec.Controller
		if err := modify(rc); err != nil {
			return err
		}
		after, err := api.Encode(rc)
		if err != nil {
			return fmt.Errorf("controller %q: %w", id, err)
		}
		if string(before) == string(after) {
			return nil
		}
		_, err = cn.updateController(ctx, rc, spec.ModRevision)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, registry.ErrConflict):
			continue
		case errors.Is(err, registry.ErrNotFound):
			return fmt.Errorf("controller %q was deleted by someone else; nothing written", id)
		default:
			return err
		}
	}
	return fmt.Errorf("controller %q was changed by someone else on each of %d attempts; gave up, nothing written", id, scaleAttempts)
}
