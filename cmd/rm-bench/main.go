// Command rm-bench is `make bench`: it measures the replication manager
// against the Docker Engine's own limit and Swarm on the same machine, and
// the control plane at scale with the in-memory fake, prints a table and
// writes it to docs/BENCHMARKS.md and bench-results/. See internal/bench.
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

	"github.com/spf13/pflag"

	"github.com/replication-manager/replication-manager/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "rm-bench: %v\n", err)
		os.Exit(1)
	}
}

// run parses the flags and runs the benchmark, or, given the hidden
// scale-worker or nodes-worker subcommand, one control-plane subprocess.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == bench.ScaleWorkerCommand {
		return bench.RunScaleWorker(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == bench.NodesWorkerCommand {
		return bench.RunNodesWorker(ctx, args[1:], os.Stdin, stdout, stderr)
	}
	cfg := bench.DefaultConfig()
	fs := pflag.NewFlagSet("rm-bench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.AddFlags(fs)
	command := fs.String("command", "", "how the run was started, for the document (default: this command line)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *command == "" {
		*command = strings.Join(append([]string{"rm-bench"}, args...), " ")
	}
	return bench.Run(ctx, cfg, *command, stdout, stderr)
}
