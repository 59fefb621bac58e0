package main

// --dry-run of apply and scale: what the registry would do to the
// controller's containers if the spec were written, container by
// container and node by node, computed by the leader's own decision
// (leader.DryRun) from the would-be spec and what etcd holds: the
// specs, the assignments, the nodes' reports and the registered nodes. A
// dry run reads etcd, writes nothing, and needs no Docker.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// dryRunHelp is the usage of --dry-run.
const dryRunHelp = "validate and print what the registry would do to each container, on which node; write nothing"

// dryRun prints what the registry would do to the containers of rc.ID if
// rc, which has been validated, were written. current is the stored spec
// (nil: there is none).
func (c *cli) dryRun(ctx context.Context, cn *conn, rc *api.ReplicationController, current *registry.Spec) error {
	in, err := readDryRunInput(ctx, cn, rc, current)
	if err != nil {
		return fmt.Errorf("dry run of controller %q: reading the registry (nothing written): %w", rc.ID, err)
	}
	in.MaxReplicas, in.Now = c.opts.maxReplicas, c.now()
	plan, err := leader.DryRun(in)
	if err != nil {
		return fmt.Errorf("dry run of controller %q (nothing written): %w", rc.ID, err)
	}
	var stored *api.ReplicationController
	if current != nil && current.Err == nil {
		stored = current.Controller
	}
	printDryRun(c.stdout, plan, dryRunStops(plan, stored))
	return nil
}

// readDryRunInput reads what the leader decides from: every spec, every
// assignment, the registered nodes, their configs and their reports on
// rc.ID.
func readDryRunInput(ctx context.Context, cn *conn, rc *api.ReplicationController, current *registry.Spec) (leader.DryRunInput, error) {
	type listed struct {
		specs []registry.Spec
		rev   int64
	}
	l, err := call(ctx, cn, func(ctx context.Context) (listed, error) {
		specs, rev, err := cn.store.ListControllers(ctx)
		return listed{specs, rev}, err
	})
	if err != nil {
		return leader.DryRunInput{}, err
	}
	assignments, err := cn.listAssignments(ctx)
	if err != nil {
		return leader.DryRunInput{}, err
	}
	nodes, err := cn.listNodes(ctx)
	if err != nil {
		return leader.DryRunInput{}, err
	}
	reports, err := cn.listReports(ctx, rc.ID)
	if err != nil {
		return leader.DryRunInput{}, err
	}
	configs, err := readNodeConfigs(ctx, cn)
	if err != nil {
		return leader.DryRunInput{}, err
	}
	st, err := cn.getStatus(ctx, rc.ID)
	if err != nil {
		return leader.DryRunInput{}, err
	}
	var rollout *api.RolloutRecord
	if st != nil {
		rollout = st.Rollout
	}
	// the revision the spec would have: its own when the write changes
	// nothing, the next one otherwise
	revision := l.rev + 1
	if current != nil && current.Err == nil {
		same, err := sameSpec(rc, current.Controller)
		if err != nil {
			return leader.DryRunInput{}, err
		}
		if same {
			revision = current.ModRevision
		}
	}
	return leader.DryRunInput{Spec: rc, Revision: revision, Controllers: l.specs, Assignments: assignments,
		Reports: reports, Nodes: nodes, Configs: configs, Rollout: rollout}, nil
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

// printDryRun prints one line per container, with its node, then why the
// rollout would stall, if it would, then the stops (dryRunStops), then how
// many of each.
func printDryRun(w io.Writer, plan leader.DryRunPlan, stops []string) {
	counts := map[string]int{}
	for _, s := range plan.Steps {
		counts[s.Action]++
		var line string
		switch s.Action {
		case "create":
			line = fmt.Sprintf("%s: would be created on %s", s.Container, s.Node)
		case "replace":
			line = fmt.Sprintf("%s: would be replaced on %s", s.Container, s.Node)
		case "move":
			line = fmt.Sprintf("%s: would be moved from %s to %s", s.Container, s.From, s.Node)
		case "remove":
			line = fmt.Sprintf("%s: would be removed from %s", s.Container, s.Node)
		default:
			line = fmt.Sprintf("%s: would be %s on %s", s.Container, s.Action, s.Node)
		}
		if s.Detail != "" {
			line += " (" + s.Detail + ")"
		}
		fmt.Fprintln(w, line)
	}
	for _, name := range plan.Unschedulable {
		fmt.Fprintf(w, "%s: unschedulable (%s)\n", name, plan.Reason)
	}
	for _, s := range plan.Waiting {
		fmt.Fprintf(w, "%s: would wait to be replaced on %s (%s)\n", s.Container, s.Node, s.Detail)
	}
	if plan.Stall != "" {
		fmt.Fprintf(w, "rollout would stall: %s\n", plan.Stall)
	}
	if plan.Restores != "" {
		fmt.Fprintf(w, "rollback: %s\n", plan.Restores)
	}
	for _, im := range plan.Images {
		fmt.Fprintf(w, "image %s on %s: %s\n", im.Image, im.Node, im.Pull)
	}
	for _, line := range stops {
		fmt.Fprintln(w, line)
	}
	if !plan.Settled {
		fmt.Fprintln(w, "dry run: the decision had not settled when the dry run stopped; these are its first steps")
	}
	var parts []string
	for _, action := range []string{"create", "replace", "move", "remove"} {
		if n := counts[action]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n, action))
		}
	}
	if n := len(plan.Unschedulable); n > 0 {
		parts = append(parts, fmt.Sprintf("%d unschedulable", n))
	}
	if n := len(plan.Waiting); n > 0 {
		parts = append(parts, fmt.Sprintf("%d to replace once it is unblocked", n))
	}
	if len(parts) == 0 {
		parts = []string{"no change"}
	}
	fmt.Fprintf(w, "dry run: %s (nothing written)\n", strings.Join(parts, ", "))
}
