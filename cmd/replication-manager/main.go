// Command replication-manager keeps the containers of every replication
// controller stored in etcd running on the local Docker Engine.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/replication-manager/replication-manager/internal/etcdctlenv"
	"github.com/replication-manager/replication-manager/internal/version"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		_, _ = fmt.Fprintf(os.Stderr, "replication-manager: %v\n", err)
		os.Exit(exitCode(err))
	}
}

// usageError is a mistake in the command line that the flags cannot
// express, such as a positional argument; main exits 2 for it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// exitCode is 2 for a usage error and 1 for anything else.
func exitCode(err error) int {
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// run parses the flags and runs the daemon until ctx ends. --help prints
// the flags on stdout; a flag mistake prints them on stderr. --version
// prints the version line on stdout and starts nothing.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, stdout, stderr, dialDocker)
}

// newDaemonOptions returns the options before the flags: newOptions, but
// with the --shutdown-grace-period under which the stop's deadlines sum to
// under 10s (stop.go).
func newDaemonOptions() *options {
	opts := newOptions()
	opts.ShutdownGracePeriod = defaultShutdownGracePeriod
	return opts
}

// closingTaskControl is a task control that holds a connection.
type closingTaskControl interface {
	taskControl
	Close() error
}

// dialDocker returns the Docker client of opts: run's task control.
func dialDocker(opts *options) (closingTaskControl, error) {
	return taskcontrol.NewDocker(taskcontrol.DockerOptions{Host: opts.DockerHost, StopTimeout: opts.DockerStopTimeout,
		MaxStopGrace: opts.maxStopGrace(), DockerConfig: opts.DockerConfig})
}

// runWith is run on the task control that dial returns: the tests give
// the in-memory fake, so that they run the whole daemon without Docker.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, dial func(*options) (closingTaskControl, error)) error {
	opts, showVersion, err := parseArgs(args, stdout, stderr)
	if err != nil {
		return err
	}
	if showVersion {
		_, err := fmt.Fprintln(stdout, version.String("replication-manager"))
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	logger, err := newLogger(stderr, opts.LogLevel, opts.LogFormat)
	if err != nil {
		return err
	}
	docker, err := dial(opts)
	if err != nil {
		return err
	}
	defer func() { _ = docker.Close() }()
	return serve(ctx, opts, logger, docker)
}

// synopsis opens the help: the command line, and what the daemon does.
const synopsis = `Usage: replication-manager [flags]

replication-manager keeps the containers of every replication controller stored in etcd running on the local Docker Engine.
`

// parseArgs parses the command line into the options, and gives the etcd
// flags it leaves unset their values from etcdctl's environment variables
// (ETCD_PASSWORD, the daemon's own, ranks above ETCDCTL_PASSWORD). It
// refuses positional arguments, and reports whether --version was given.
func parseArgs(args []string, stdout, stderr io.Writer) (*options, bool, error) {
	opts := newDaemonOptions()
	fs := pflag.NewFlagSet("replication-manager", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	opts.AddFlags(fs)
	showVersion := fs.Bool("version", false, "print the version, VCS revision and time, and exit")
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		out := stderr
		if errors.Is(err, pflag.ErrHelp) {
			out = stdout
		}
		_, _ = fmt.Fprintf(out, "%s\nFlags:\n%s", synopsis, fs.FlagUsages())
		return nil, false, err
	}
	if fs.NArg() > 0 {
		// a stray word would otherwise be ignored and the daemon start
		return nil, false, &usageError{msg: fmt.Sprintf("unexpected argument %q: replication-manager takes only flags (see --help)", fs.Arg(0))}
	}
	if *showVersion {
		return opts, true, nil
	}
	if err := etcdctlenv.Apply(fs, os.Getenv, os.Getenv("ETCD_PASSWORD") != ""); err != nil {
		return nil, false, err
	}
	return opts, false, nil
}
