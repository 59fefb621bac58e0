// Command rcctl reads and writes replication controller specs in etcd, with
// kubectl habits: apply, get, describe, logs, scale, rollout, delete, the 2014
// run, and nodes, the Docker engines the managers act for, with their
// maintenance: cordon, uncordon, drain and label node.
//
// This file holds main, run and the command tree, built on cobra as
// kubectl's is; each subcommand lives in its own file, the etcd and Docker
// connections in client.go, shell completion in completion.go and the table
// helpers in print.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func init() {
	// "rcctl help" lists the commands in the order of a controller's life,
	// as commands() gives them, not by name.
	cobra.EnableCommandSorting = false
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rcctl: %s\n", oneLine(err))
		os.Exit(exitCode(err))
	}
}

// run is rcctl without the process around it: args exclude the program
// name, and every byte of output goes to stdout or stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return newCLI(stdin, stdout, stderr).run(ctx, args)
}

func newCLI(stdin io.Reader, stdout, stderr io.Writer) *cli {
	return &cli{
		stdin:      stdin,
		stdout:     stdout,
		stderr:     stderr,
		dialDocker: dialDocker,
		dialLogs:   dialLogs,
		leaseTTL:   leaseTTL,
		now:        time.Now,
		getenv:     os.Getenv,
	}
}

// cli is one invocation of rcctl: its streams, its global options and the
// dependencies tests replace (the Docker client, etcd's answer on a
// lease's remaining time, and the clock).
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	opts           globalOptions
	// dialDocker opens the Docker side that describe lists containers from.
	dialDocker func(host string) (taskLister, func(), error)
	// dialLogs opens the Docker side that logs reads containers' output
	// from.
	dialLogs func(host string) (logSource, func(), error)
	// leaseTTL asks etcd for the seconds a lease has left (-1: gone).
	leaseTTL func(ctx context.Context, cn *conn, lease clientv3.LeaseID) (int64, error)
	// now is the clock ages are measured against.
	now func() time.Time
	// getenv reads the environment: the ETCDCTL_* defaults of the etcd
	// flags.
	getenv func(string) string
	// globalFlags are the root's persistent flags, once built: those the
	// environment gives defaults to.
	globalFlags *pflag.FlagSet
	// accepted is set once cobra has accepted the command line (command,
	// flags, arguments): an error before that is a usage mistake.
	accepted bool
	// policy is the leader's published policy, once read (policy.go).
	policy *policyState
}

// commands are rcctl's subcommands, in the order "rcctl help" lists them.
func (c *cli) commands() []*cobra.Command {
	return []*cobra.Command{
		c.applyCommand(),
		c.getCommand(),
		c.describeCommand(),
		c.logsCommand(),
		c.scaleCommand(),
		c.setCommand(),
		c.rolloutCommand(),
		c.deleteCommand(),
		c.runCommand(),
		c.nodesCommand(),
		c.cordonCommand(),
		c.uncordonCommand(),
		c.drainCommand(),
		c.labelCommand(),
		c.versionCommand(),
	}
}

// run executes one command line. Cobra prints nothing of its own: help
// goes to stdout, and every error is returned for main to print as one
// line. The global flags are persistent flags of the root, so that both
// "rcctl --etcd-servers X get" and "rcctl get --etcd-servers X" work.
func (c *cli) run(ctx context.Context, args []string) error {
	root := c.rootCommand()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var u *usageError
	if err != nil && !c.accepted && !errors.As(err, &u) {
		// cobra's own refusals: an unknown flag or subcommand, a wrong
		// argument count of a command it provides (completion)
		return &usageError{msg: err.Error()}
	}
	return err
}

// rootCommand builds the command tree of one invocation.
func (c *cli) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "rcctl",
		Long:          "rcctl reads and writes replication controller specs in etcd.",
		SilenceErrors: true,
		SilenceUsage:  true,
		// An argument that is not a subcommand reaches the root.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(c.stderr, "%s\n\n%s", cmd.Long, cmd.UsageString())
			return usageErrorf("no command given (see rcctl help)")
		},
	}
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetUsageFunc(usage)
	root.SetFlagErrorFunc(flagError)
	c.opts.addFlags(root.PersistentFlags())
	c.globalFlags = root.PersistentFlags()

	help := c.helpCommand(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// cobra checks these after this hook; checked here too, every
		// refusal of cobra's comes before accepted is set
		for _, check := range []func() error{cmd.ValidateRequiredFlags, cmd.ValidateFlagGroups} {
			if err := check(); err != nil {
				name := commandName(cmd)
				return usageErrorf("%s: %v (see rcctl %s -h)", name, err, name)
			}
		}
		c.accepted = true
		if cmd == help || cmd == root || (cmd.Name() == "version" && cmd.Parent() == root) {
			return nil // none connects; the root only reports that no command was given
		}
		if err := c.readEnv(); err != nil {
			return usageErrorf("%v", err)
		}
		if err := c.opts.validate(); err != nil {
			return usageErrorf("%v", err)
		}
		return nil
	}
	root.AddCommand(c.commands()...)
	root.SetHelpCommand(help)
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		if cmd.Name() == "completion" {
			adaptCompletionCommand(cmd)
		}
	}
	unsortFlags(root)
	return root
}

// adaptCompletionCommand makes cobra's "completion", whose subcommands
// print the scripts, refuse a missing or unknown shell as a usage error
// (cobra would print its help and succeed), and gives it a one-line
// description in the style of the others.
func adaptCompletionCommand(cmd *cobra.Command) {
	cmd.Short = "print a shell completion script: bash, zsh, fish or powershell"
	cmd.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("completion: unknown shell %q (want bash, zsh, fish or powershell)", args[0])
		}
		return nil
	}
	cmd.RunE = func(*cobra.Command, []string) error {
		return usageErrorf("completion: name a shell: bash, zsh, fish or powershell (see rcctl completion -h)")
	}
}

// helpCommand serves "rcctl help" and "rcctl help <command>". It is cobra's
// help command, except that an unknown command is a usage error.
func (c *cli) helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "show help for rcctl or one command",
		Long:  "Help shows the commands and global flags of rcctl, or the usage and flags of one command.",
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, cmd := range root.Commands() {
				if cmd.IsAvailableCommand() && strings.HasPrefix(cmd.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(cmd.Name(), cmd.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			target, _, err := root.Find(args)
			if err != nil {
				return usageErrorf("%v (see rcctl help)", err)
			}
			if target == root && len(args) > 0 {
				return unknownCommand(root, args[0])
			}
			target.InitDefaultHelpFlag() // so that its -h shows, as with "rcctl CMD -h"
			return target.Help()
		},
	}
}

// unknownCommand is the error for name, which is not a command of the
// root, with cobra's suggestions (suggest.go).
func unknownCommand(root *cobra.Command, name string) error {
	return unknownCommandOf(root, name, "rcctl help")
}

// flagError is the error for a flag cobra could not parse.
func flagError(cmd *cobra.Command, err error) error {
	if !cmd.HasParent() {
		if cmd.Flags().NArg() > 0 {
			// "rcctl frobnicate --bogus": the command is the first mistake
			return unknownCommand(cmd, cmd.Flags().Arg(0))
		}
		return usageErrorf("%v (see rcctl help)", err)
	}
	name := commandName(cmd)
	return usageErrorf("%s: %v (see rcctl %s -h)", name, err, name)
}

// commandName is the command's path without "rcctl ": "scale", or
// "completion bash".
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// unsortFlags makes every command list its flags in the order they are
// declared, which keeps related flags (the etcd TLS ones, --wait and
// --timeout) together.
func unsortFlags(cmd *cobra.Command) {
	cmd.Flags().SortFlags = false
	cmd.PersistentFlags().SortFlags = false
	for _, sub := range cmd.Commands() {
		unsortFlags(sub)
	}
}

// usage prints a command's synopsis, subcommands and flags in the layout of
// cobra's default, with the flags in declaration order and the root's flags
// named global flags, which they are.
func usage(cmd *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:\n")
	switch {
	case !cmd.HasParent():
		b.WriteString("  rcctl [global flags] <command> [flags] [args]\n")
	case cmd.Runnable() && !cmd.HasAvailableSubCommands():
		// a command with subcommands runs only to report a mistake
		fmt.Fprintf(&b, "  %s\n", cmd.UseLine())
	}
	if cmd.HasParent() && cmd.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "  %s [command]\n", cmd.CommandPath())
	}
	if cmd.HasAvailableSubCommands() {
		b.WriteString("\nAvailable Commands:\n")
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(&b, "  %-*s %s\n", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	local, inherited := cmd.LocalFlags(), cmd.InheritedFlags()
	inherited.SortFlags = false
	if cmd.HasAvailableLocalFlags() {
		title := "Flags"
		if !cmd.HasParent() {
			title = "Global Flags"
		}
		fmt.Fprintf(&b, "\n%s:\n%s", title, local.FlagUsages())
	}
	if cmd.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\nGlobal Flags:\n%s", inherited.FlagUsages())
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nUse \"%s [command] --help\" for more information about a command.\n", cmd.CommandPath())
	}
	_, err := io.WriteString(cmd.OutOrStderr(), b.String())
	return err
}

// usageError is a mistake in the command line; main exits 2 for it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode is 2 for a usage error and 1 for anything else.
func exitCode(err error) int {
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}
