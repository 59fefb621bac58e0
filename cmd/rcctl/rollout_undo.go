package main

// rollout undo writes a recorded template back into a controller's spec,
// as kubectl rollout undo does: by default the newest recorded template
// other than the current one, or the one of --to-revision. After the
// manager rolled a failed rollout back (updateStrategy.failureAction
// rollback), the default is the template it restored: the spec then
// agrees with what runs. Only
// desiredState.taskTemplate changes; replicas, the selector, the strategy
// and the rest stay as they are. The write compares the spec's
// ModRevision: if someone changed the spec since it was read, nothing is
// written and the conflict is reported (the template they wrote is not
// overwritten by an older one).

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

func (c *cli) rolloutUndoCommand() *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo ID [--to-revision REV]",
		Short: "write an earlier template back into a controller's spec",
		Long: `Rollout undo writes a template from the controller's history (see rcctl rollout
history) back into its spec: by default the newest recorded template other than
the current one, or that of --to-revision (a number in rollout history's
REVISION column). When the manager has rolled a failed rollout back
(updateStrategy.failureAction rollback), the default is the template it
restored, which runs: the spec then says what runs. Replicas and everything outside
desiredState.taskTemplate stay as they are; the manager then rolls the
containers back as it rolls any change. If the spec changes between undo's
read and its write, nothing is written.`,
		Args:              oneID("undo"),
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if toRevision < 0 {
				return usageErrorf("rollout undo: --to-revision must not be negative, got %d", toRevision)
			}
			return c.rolloutUndo(cmd.Context(), args[0], toRevision)
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "the revision to go back to, as rcctl rollout history lists it (default: the previous one)")
	return cmd
}

func (c *cli) rolloutUndo(ctx context.Context, id string, toRevision int64) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	spec, revs, err := readHistory(ctx, cn, id)
	if err != nil {
		return err
	}
	st, err := cn.getStatus(ctx, id)
	if err != nil {
		return err
	}
	return c.undoAt(ctx, cn, spec, revs, runningHash(spec, st), toRevision)
}

// undoAt writes the template of toRevision (0: the previous one, or the
// one that runs when the manager rolled the spec's back) of revs into
// spec, as it was read; the write succeeds only if the spec is still as
// read.
func (c *cli) undoAt(ctx context.Context, cn *conn, spec registry.Spec, revs []api.Revision, running string, toRevision int64) error {
	id := spec.ID
	if spec.Err != nil {
		return fmt.Errorf("controller %q: stored spec does not decode (fix it with rcctl apply): %w", id, spec.Err)
	}
	rc := spec.Controller
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	target, err := undoTarget(id, revs, hash, running, toRevision)
	if err != nil {
		return err
	}
	if target.TemplateHash == hash {
		// kubectl says so and succeeds: the spec is where it was asked to be
		fmt.Fprintf(c.stdout, "%s: already at revision %d; nothing changed\n", id, target.Number)
		return nil
	}
	rc.DesiredState.TaskTemplate = target.TaskTemplate
	if err := c.validate(ctx, cn, rc, id); err != nil {
		return invalid(id, fmt.Sprintf("with the template of revision %d", target.Number), err)
	}
	_, err = cn.updateController(ctx, rc, spec.ModRevision)
	switch {
	case errors.Is(err, registry.ErrConflict):
		return fmt.Errorf("controller %q was changed by someone else since it was read; nothing written, run rollout undo again", id)
	case errors.Is(err, registry.ErrNotFound):
		return fmt.Errorf("controller %q was deleted by someone else since it was read; nothing written", id)
	case err != nil:
		return err
	}
	fmt.Fprintf(c.stdout, "%s rolled back to revision %d\n", id, target.Number)
	if rc.DesiredState.Paused {
		fmt.Fprintf(c.stderr, "warning: %s is paused: the manager rolls the containers back once desiredState.paused is false\n", id)
	}
	return nil
}

// undoTarget is the revision undo writes back: the one numbered
// toRevision, or when it is 0, the newest recorded one of the template
// that runs (running) when that is not the spec's (hash), else the newest
// recorded one whose template differs from the spec's.
func undoTarget(id string, revs []api.Revision, hash, running string, toRevision int64) (api.Revision, error) {
	if toRevision != 0 {
		for _, r := range revs {
			if r.Number == toRevision {
				return r, nil
			}
		}
		return api.Revision{}, fmt.Errorf("controller %q has no revision %d in its history (see rcctl rollout history %s)", id, toRevision, id)
	}
	if i := currentRevision(revs, running); running != hash && i >= 0 {
		return revs[i], nil
	}
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].TemplateHash != hash {
			return revs[i], nil
		}
	}
	if len(revs) == 0 {
		return api.Revision{}, fmt.Errorf("controller %q has no recorded revisions to go back to (the manager records a template when it first acts on it)", id)
	}
	return api.Revision{}, fmt.Errorf("controller %q has no previous revision: every recorded one is the current template", id)
}
