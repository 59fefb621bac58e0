package main

// rollout restart sets desiredState.taskTemplate.restartedAt to now, as
// kubectl rollout restart sets its restartedAt annotation: the template's
// hash changes, so every container is outdated and the manager replaces
// them all within the update strategy. It is a read-modify-write of one
// field, so a conflict is retried as scale retries it, keeping the other
// edit. A controller of no replicas has nothing to replace: restart writes
// nothing and says so.

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
)

func (c *cli) rolloutRestartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restart ID",
		Short: "replace every container of a controller, one rollout step at a time",
		Long: `Rollout restart records the time in desiredState.taskTemplate.restartedAt,
which changes the template without changing what runs: the manager replaces
every container within the spec's updateStrategy, as for a new image. A
controller of 0 replicas has none to replace: nothing is written.`,
		Args:              oneID("restart"),
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.rolloutRestart(cmd.Context(), args[0])
		},
	}
}

func (c *cli) rolloutRestart(ctx context.Context, id string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	var paused, none bool
	err = readModifyWrite(ctx, cn, id, func(rc *api.ReplicationController) error {
		if none = rc.DesiredState.Replicas == 0; none {
			return nil // unchanged: nothing is written
		}
		rc.DesiredState.TaskTemplate.RestartedAt = restartTime(c.now(), rc.DesiredState.TaskTemplate.RestartedAt)
		if err := c.validate(ctx, cn, rc, id); err != nil {
			return invalid(id, "", err)
		}
		paused = rc.DesiredState.Paused
		return nil
	})
	if err != nil {
		return err
	}
	if none {
		fmt.Fprintf(c.stdout, "%s has no replicas to restart; nothing changed\n", id)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s restarted\n", id)
	if paused {
		fmt.Fprintf(c.stderr, "warning: %s is paused: the manager replaces the containers once desiredState.paused is false\n", id)
	}
	return nil
}

// restartTime is now in RFC 3339, UTC, to the second; with fractions of a
// second when a restart in the same second came before (previous), so
// that a second restart still changes the template.
func restartTime(now time.Time, previous string) string {
	now = now.UTC()
	if s := now.Format(time.RFC3339); s != previous {
		return s
	}
	return now.Format(time.RFC3339Nano)
}
