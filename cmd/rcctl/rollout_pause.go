package main

// rollout pause and resume set desiredState.paused, as kubectl rollout
// pause and resume set a Deployment's spec.paused: while it is true the
// manager keeps every replica running and replaced, but takes no rollout
// step, so several template edits can go in and roll out as one. Each is
// a read-modify-write of that one field, retried on a conflict as scale
// is.

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
)

func (c *cli) rolloutPauseCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pause ID",
		Short: "stop the rollout of a controller's template where it is",
		Long: `Rollout pause sets desiredState.paused: the manager keeps the replicas running
and replaces those that die, but takes no further rollout step until rollout
resume.`,
		Args:              oneID("pause"),
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.setPaused(cmd.Context(), args[0], true)
		},
	}
}

func (c *cli) rolloutResumeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "resume ID",
		Short: "let a paused rollout go on",
		Long: `Rollout resume clears desiredState.paused: the manager goes on rolling the
controller's template out within its updateStrategy.`,
		Args:              oneID("resume"),
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.setPaused(cmd.Context(), args[0], false)
		},
	}
}

// setPaused writes desiredState.paused of id; a controller that already
// is as asked is left alone, and said so ("web is not paused; nothing
// changed"), with success.
func (c *cli) setPaused(ctx context.Context, id string, paused bool) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	word := map[bool]string{true: "paused", false: "resumed"}[paused]
	unchanged := false
	err = readModifyWrite(ctx, cn, id, func(rc *api.ReplicationController) error {
		unchanged = rc.DesiredState.Paused == paused // then nothing is written
		rc.DesiredState.Paused = paused
		if err := c.validate(ctx, cn, rc, id); err != nil {
			return invalid(id, "", err)
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case unchanged && paused:
		fmt.Fprintf(c.stdout, "%s is already paused; nothing changed\n", id)
	case unchanged:
		fmt.Fprintf(c.stdout, "%s is not paused; nothing changed\n", id)
	default:
		fmt.Fprintf(c.stdout, "%s %s\n", id, word)
	}
	return nil
}
