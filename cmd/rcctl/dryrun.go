package main

// --dry-run of apply and scale: what the manager would do to the
// controller's containers if the spec were written, container by
// container, computed by the manager's own plan (registry.DryRun) from the
// would-be spec and the containers Docker reports now. A dry run reads
// etcd and Docker and writes nothing anywhere.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// dryRunHelp is the usage of --dry-run.
const dryRunHelp = "validate and print what the manager would do to each container; write nothing"

// dryRun prints what the manager would do to make the containers of
// rc.ID match rc, which has been validated. registryID is this registry's
// ("" before a manager has written one).
func (c *cli) dryRun(ctx context.Context, rc *api.ReplicationController, registryID string) error {
	tasks, err := c.listContainers(ctx, rc.ID, registryID)
	if err != nil {
		return fmt.Errorf("dry run of controller %q: containers unavailable (nothing written): %w", rc.ID, err)
	}
	steps := registry.DryRun(rc, tasks, registryID, registry.Options{}, c.now())
	printDryRun(c.stdout, steps)
	return nil
}

// readRegistryID reads this registry's id without creating it: "" when no
// manager has written one yet, which is what a manager's containers of
// before the id carry.
func readRegistryID(ctx context.Context, cn *conn) (string, error) {
	id, err := call(ctx, cn, cn.store.GetRegistryID)
	if errors.Is(err, registry.ErrNotFound) {
		return "", nil
	}
	return id, err
}

// printDryRun prints one line per container, then how many of each.
func printDryRun(w io.Writer, steps []registry.DryRunStep) {
	counts := map[string]int{}
	for _, s := range steps {
		counts[s.Action]++
		line := fmt.Sprintf("%s: would be %s", s.Container, dryRunVerb(s.Action))
		// a create's detail only names the current template
		if s.Detail != "" && s.Action != "create" {
			line += " (" + s.Detail + ")"
		}
		fmt.Fprintln(w, line)
	}
	var parts []string
	for _, action := range []string{"create", "replace", "remove"} {
		if n := counts[action]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n, action))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no change"}
	}
	fmt.Fprintf(w, "dry run: %s (nothing written)\n", strings.Join(parts, ", "))
}

func dryRunVerb(action string) string {
	switch action {
	case "create":
		return "created"
	case "replace":
		return "replaced"
	case "remove":
		return "removed"
	}
	return action + "d"
}
