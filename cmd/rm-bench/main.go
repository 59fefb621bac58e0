// Command rm-bench is `make bench-docker`: it measures the replication
// manager side by side with the Docker Engine driven directly and Swarm on
// the same machine, prints a table and writes every sample as JSON to
// bench-results/. See internal/bench. The control plane at scale is the Go
// benchmarks of registry/agent and registry/leader (`make bench`).
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

// run parses the flags and runs the benchmark.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
