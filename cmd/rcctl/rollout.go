package main

// rollout groups the commands of a controller's template updates
// (docs/CONTRACT.md, Updates), as kubectl rollout does: status follows a
// rollout to its end, history lists the templates the manager recorded,
// undo writes one of them back, restart makes every container outdated.
// The manager does the rolling; these commands only read the status and
// the history, and write the spec.

import (
	"strings"

	"github.com/spf13/cobra"
)

// rolloutCommands are the subcommands of rollout, as "rcctl rollout -h"
// lists them.
func (c *cli) rolloutCommands() []*cobra.Command {
	return []*cobra.Command{
		c.rolloutStatusCommand(),
		c.rolloutHistoryCommand(),
		c.rolloutUndoCommand(),
		c.rolloutRestartCommand(),
		c.rolloutPauseCommand(),
		c.rolloutResumeCommand(),
	}
}

func (c *cli) rolloutCommand() *cobra.Command {
	subs := c.rolloutCommands()
	names := make([]string, len(subs))
	for i, sub := range subs {
		names[i] = sub.Name()
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "follow, list, undo, restart, pause or resume the rollout of a new template",
		Long: `Rollout manages the updates of a controller's task template. When the template
changes (rcctl apply of a new image, or rollout restart), the manager replaces
the outdated containers within the spec's updateStrategy; rollout status follows
that until it completes, rollout history lists the templates the manager
recorded, rollout undo writes an earlier one back into the spec, and rollout
pause and resume stop the steps and let them go on.`,
		// a wrong or missing subcommand reaches the parent: a usage error,
		// not cobra's help and success
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if hint := didYouMean(cmd, args[0]); hint != "" {
					return unknownCommandOf(cmd, args[0], "rcctl rollout -h")
				}
				return usageErrorf("rollout: unknown command %q (want %s; see rcctl rollout -h)", args[0], list)
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return usageErrorf("rollout: name a command: %s (see rcctl rollout -h)", list)
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		// "rcctl undo" suggests rollout
		SuggestFor: names,
	}
	cmd.AddCommand(subs...)
	return cmd
}

// oneID is the argument check of the rollout commands: exactly one
// controller id.
func oneID(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageErrorf("rollout %s: want exactly one ID, got %d", name, len(args))
		}
		return nil
	}
}
