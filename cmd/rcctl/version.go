package main

// version prints the one line internal/version makes of the binary's build
// information. It reads neither etcd nor the global flags.

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/internal/version"
)

func (c *cli) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "version",
		Short:             "print rcctl's version, VCS revision and time",
		Long:              "Version prints the module version of rcctl and the VCS revision and commit time it was built from (\"modified\" when the work tree had changes).",
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("version: takes no arguments, got %q", args[0])
			}
			_, err := fmt.Fprintln(c.stdout, version.String("rcctl"))
			return err
		},
	}
}
