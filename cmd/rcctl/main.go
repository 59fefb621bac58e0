// Command rcctl reads and writes replication controller specs in etcd, with
// kubectl habits: apply, get, describe, scale, delete and the 2014 run.
//
// This file holds main, run and the dispatch to subcommands; each subcommand
// lives in its own file, the etcd and Docker connections in client.go and
// the table helpers in print.go.
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

	"github.com/spf13/pflag"

	"github.com/replication-manager/replication-manager/api"
)

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
		now:        time.Now,
	}
}

// cli is one invocation of rcctl: its streams, its global options and the
// two dependencies tests replace (the Docker client and the clock).
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	opts           globalOptions
	// dialDocker opens the Docker side that describe lists containers from.
	dialDocker func(host string) (taskLister, func(), error)
	// now is the clock ages are measured against.
	now func() time.Time
}

// validate checks a spec as the manager will, before anything is written
// under the key of id. The security policy (privileged, host network,
// mounts, ...) is the daemon's to decide from its own flags, which rcctl
// cannot see: rcctl checks the shape of those fields and allows them.
func (c *cli) validate(rc *api.ReplicationController, id string) error {
	return api.Validate(rc, api.ValidateOptions{
		Key:         id,
		MaxReplicas: c.opts.maxReplicas,
		Policy:      api.AllowAllPolicy(),
	})
}

// command is one subcommand: its synopsis, its own flags and what it does
// with the remaining arguments.
type command struct {
	name  string
	usage string // synopsis after "rcctl "
	short string // one line for "rcctl help"
	long  string // paragraph for "rcctl help <name>"
	flags *pflag.FlagSet
	run   func(ctx context.Context, args []string) error
}

func (c *cli) commands() []*command {
	return []*command{
		c.applyCommand(),
		c.getCommand(),
		c.describeCommand(),
		c.scaleCommand(),
		c.deleteCommand(),
		c.runCommand(),
	}
}

func (c *cli) lookup(name string) *command {
	for _, cmd := range c.commands() {
		if cmd.name == name {
			return cmd
		}
	}
	return nil
}

// run parses the global flags up to the subcommand, then the subcommand's
// flags, which include the global ones, so that both
// "rcctl --etcd-servers X get" and "rcctl get --etcd-servers X" work.
func (c *cli) run(ctx context.Context, args []string) error {
	global := newFlagSet("rcctl")
	global.SetInterspersed(false)
	c.opts.addFlags(global)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			c.printUsage(c.stdout, global)
			return nil
		}
		return usageErrorf("%v (see rcctl help)", err)
	}
	rest := global.Args()
	if len(rest) == 0 {
		c.printUsage(c.stderr, global)
		return usageErrorf("no command given (see rcctl help)")
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return c.help(rest, global)
	}
	cmd := c.lookup(name)
	if cmd == nil {
		return usageErrorf("unknown command %q (see rcctl help)", name)
	}
	fs := newFlagSet(cmd.name)
	fs.AddFlagSet(cmd.flags)
	fs.AddFlagSet(global)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			c.printCommandUsage(c.stdout, cmd, global)
			return nil
		}
		return usageErrorf("%s: %v (see rcctl %s -h)", cmd.name, err, cmd.name)
	}
	if err := c.opts.validate(); err != nil {
		return usageErrorf("%v", err)
	}
	return cmd.run(ctx, fs.Args())
}

// help serves "rcctl help" and "rcctl help <command>".
func (c *cli) help(args []string, global *pflag.FlagSet) error {
	if len(args) == 0 {
		c.printUsage(c.stdout, global)
		return nil
	}
	cmd := c.lookup(args[0])
	if cmd == nil {
		return usageErrorf("unknown command %q (see rcctl help)", args[0])
	}
	c.printCommandUsage(c.stdout, cmd, global)
	return nil
}

func (c *cli) printUsage(w io.Writer, global *pflag.FlagSet) {
	fmt.Fprint(w, "rcctl reads and writes replication controller specs in etcd.\n\nUsage:\n  rcctl [global flags] <command> [flags] [args]\n\nCommands:\n")
	for _, cmd := range c.commands() {
		fmt.Fprintf(w, "  %-9s %s\n", cmd.name, cmd.short)
	}
	fmt.Fprintf(w, "  %-9s %s\n", "help", "show help for rcctl or one command")
	fmt.Fprintf(w, "\nGlobal flags:\n%s\nRun 'rcctl help <command>' for a command's flags.\n", global.FlagUsages())
}

func (c *cli) printCommandUsage(w io.Writer, cmd *command, global *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n  rcctl %s\n\n%s\n", cmd.usage, cmd.long)
	if local := cmd.flags.FlagUsages(); local != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", local)
	}
	fmt.Fprintf(w, "\nGlobal flags:\n%s", global.FlagUsages())
}

// newFlagSet returns a flag set that reports errors instead of printing
// them or exiting: run decides what the user sees.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
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

// oneLine folds a multi-line error into one line, so that every failure is
// one "rcctl: ..." line on stderr.
func oneLine(err error) string {
	var parts []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}
