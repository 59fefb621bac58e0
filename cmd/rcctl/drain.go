package main

// drain empties a node (docs/CONTRACT.md, Node maintenance), as kubectl
// drain does: it sets the node's availability to drain in
// /registry/nodeconfig/<node>, then follows the moves the leader makes,
// paced (at most max(1, maxUnavailable) slots of a controller at a time,
// stop first), until no slot is assigned to the node and its reports
// show none of our containers. A slot that no other node can take stays
// where it is, and the status says so (ReplicaFailure, Unschedulable):
// drain then fails naming each such slot and why. --dry-run writes
// nothing and lists the moves, controller by controller, with their
// pacing, as the leader's own decision would make them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// drainPoll is how often drain reads what is left on the node, and
// drainStuckPolls how many reads in a row must find every slot left
// unschedulable, and nothing changed, before drain gives up.
const (
	drainPoll       = time.Second
	drainStuckPolls = 5
)

func (c *cli) drainCommand() *cobra.Command {
	var timeout time.Duration
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "drain NODE [--timeout D] [--dry-run]",
		Short: "move every slot off a node, paced, and wait until it runs nothing of ours",
		Long: `Drain sets the node's availability to drain in /registry/nodeconfig/NODE, then
follows the moves with a line per change until no slot is assigned to the node
and its reports show none of our containers; it then exits 0. The leader moves
at most max(1, maxUnavailable) slots of a controller at a time, stop first, and
never onto a second node while the first may still run the slot. A controller
of replicas 1 loses its only replica while it moves: drain says so first.

A slot that no other node can take (no other node matches its nodeSelector,
has room or its host ports free) stays where it is: drain exits 1 naming each
such slot and why, as the controller's status says it (Unschedulable). It exits
1 too when --timeout passes (0: no limit), naming the slots left. The node stays
drained either way; rcctl uncordon NODE makes it take slots again.

--dry-run writes nothing: it lists every move, controller by controller, with
its pacing, as the leader's decision would make it.`,
		ValidArgsFunction: c.completeNodes,
		RunE: func(cmd *cobra.Command, args []string) error {
			node, err := oneNode("drain", args)
			if err != nil {
				return err
			}
			if timeout < 0 {
				return usageErrorf("drain: --timeout must not be negative, got %s", timeout)
			}
			return c.drain(cmd.Context(), node, timeout, dryRun)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: wait as long as it takes)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "write nothing: list the moves the drain would make, with their pacing")
	return cmd
}

// drainPlan is what a drain does to one controller with slots on the
// node.
type drainPlan struct {
	id       string
	replicas int
	// slots are the controller's slots on the node, and pace how many
	// move at a time: max(1, maxUnavailable).
	slots []int
	pace  int
	// plan is the dry run's, for --dry-run; nil otherwise.
	plan *leader.DryRunPlan
}

func (c *cli) drain(ctx context.Context, node string, timeout time.Duration, dryRun bool) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	plans, err := readDrainPlans(ctx, cn, node, dryRun)
	if err != nil {
		return err
	}
	if dryRun {
		printDrainDryRun(c.stdout, node, plans)
		return nil
	}
	for _, p := range plans {
		if p.replicas == 1 {
			fmt.Fprintf(c.stdout, "warning: %s has replicas 1: its move costs its only replica until it runs on another node\n", p.id)
		}
	}
	if _, err := cn.updateNodeConfig(ctx, node, func(cfg *api.NodeConfig) error {
		cfg.Availability = api.NodeDrain
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "node/%s draining\n", node)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return c.followDrain(ctx, cn, node, timeout)
}

// readDrainPlans finds the controllers with slots on node, in id order,
// with their pacing; with dryRun, what the leader would do to each once
// the node is drained.
func readDrainPlans(ctx context.Context, cn *conn, node string, dryRun bool) ([]drainPlan, error) {
	assignments, err := cn.listAssignments(ctx)
	if err != nil {
		return nil, err
	}
	var plans []drainPlan
	for _, id := range slices.Sorted(maps.Keys(assignments)) {
		var slots []int
		for slot, a := range assignments[id] {
			if a.Node == node {
				slots = append(slots, slot)
			}
		}
		if len(slots) == 0 {
			continue
		}
		slices.Sort(slots)
		p := drainPlan{id: id, slots: slots, pace: 1}
		spec, err := cn.getController(ctx, id)
		if err == nil && spec.Err == nil {
			ds := &spec.Controller.DesiredState
			_, unavailable := ds.Strategy().Bounds(ds.Replicas)
			p.replicas, p.pace = ds.Replicas, max(1, unavailable)
			if dryRun {
				plan, err := drainDryRun(ctx, cn, &spec, node)
				if err != nil {
					return nil, err
				}
				p.plan = &plan
			}
		} else if err != nil && !errors.Is(err, registry.ErrNotFound) {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// drainDryRun is the leader's dry run of spec once node is drained.
func drainDryRun(ctx context.Context, cn *conn, spec *registry.Spec, node string) (leader.DryRunPlan, error) {
	in, err := readDryRunInput(ctx, cn, spec.Controller, spec)
	if err != nil {
		return leader.DryRunPlan{}, err
	}
	configs := maps.Clone(in.Configs)
	if configs == nil {
		configs = map[string]api.NodeConfig{}
	}
	cfg := configs[node]
	cfg.Availability = api.NodeDrain
	configs[node] = cfg
	in.Configs = configs
	in.Now = time.Now()
	return leader.DryRun(in)
}

// printDrainDryRun lists the moves of each controller, with its pacing.
func printDrainDryRun(w io.Writer, node string, plans []drainPlan) {
	if len(plans) == 0 {
		fmt.Fprintf(w, "node/%s runs no slot: nothing would move (dry run)\n", node)
		return
	}
	fmt.Fprintf(w, "node/%s would be drained (dry run):\n", node)
	for _, p := range plans {
		fmt.Fprintf(w, "\n%s: %d slot(s) on %s, moved %d at a time (max(1, maxUnavailable)), each stopped before it starts elsewhere\n",
			p.id, len(p.slots), node, p.pace)
		if p.replicas == 1 {
			fmt.Fprintf(w, "  warning: replicas 1: the move costs the only replica until it runs on another node\n")
		}
		if p.plan == nil {
			fmt.Fprintf(w, "  (no valid spec: its slots stay until it has one)\n")
			continue
		}
		for _, s := range p.plan.Steps {
			if s.Action != "move" || s.From != node {
				continue
			}
			fmt.Fprintf(w, "  move %s %s → %s\n", s.Container, s.From, s.Node)
		}
		if len(p.plan.Unschedulable) > 0 {
			fmt.Fprintf(w, "  stays: %s: no other node can take it: %s\n", strings.Join(p.plan.Unschedulable, ", "), p.plan.Reason)
		}
	}
}

// drainLeft is what is left of ours on a node: the slots assigned to it
// (controller id → slots) and the containers its reports show.
type drainLeft struct {
	slots      map[string][]int
	containers int
	// elsewhere is the node of every other slot of the controllers in
	// slots, by task name: where a slot went once it left.
	elsewhere map[string]string
}

func (l drainLeft) assigned() int {
	n := 0
	for _, s := range l.slots {
		n += len(s)
	}
	return n
}

func (l drainLeft) same(o drainLeft) bool {
	return l.containers == o.containers && maps.EqualFunc(l.slots, o.slots, slices.Equal[[]int])
}

// followDrain reads what is left on node until nothing is, printing a
// line whenever it changes; it fails when ctx ends (the timeout) or when
// every slot left is one no node can take.
func (c *cli) followDrain(ctx context.Context, cn *conn, node string, timeout time.Duration) error {
	var last drainLeft
	first, stuckPolls := true, 0
	for {
		left, err := readDrainLeft(ctx, cn, node)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
		if left.assigned() == 0 && left.containers == 0 {
			fmt.Fprintf(c.stdout, "node/%s drained\n", node)
			return nil
		}
		if !first {
			printMoved(c.stdout, node, last, left)
		}
		if first || !left.same(last) {
			fmt.Fprintf(c.stdout, "%s: %d slot(s) assigned, %d container(s) left\n", node, left.assigned(), left.containers)
			stuckPolls = 0
		}
		first, last = false, left
		if stuck, err := c.drainStuck(ctx, cn, left); err == nil && stuck != nil {
			if stuckPolls++; stuckPolls >= drainStuckPolls {
				return fmt.Errorf("drain of %s cannot finish: no other node can take %s", node, strings.Join(stuck, "; "))
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(drainPoll):
			continue
		}
		break
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) && timeout > 0 {
		why, _ := c.drainStuck(context.WithoutCancel(ctx), cn, last)
		msg := fmt.Sprintf("drain of %s timed out after %s with %d slot(s) assigned and %d container(s) left", node, timeout, last.assigned(), last.containers)
		if len(why) > 0 {
			msg += ": no other node can take " + strings.Join(why, "; ")
		} else if names := slotNames(last.slots); len(names) > 0 {
			msg += ": " + strings.Join(names, ", ")
		}
		return errors.New(msg)
	}
	return ctx.Err()
}

// printMoved prints a line for each slot that was on node in last and is
// assigned to another node in left.
func printMoved(w io.Writer, node string, last, left drainLeft) {
	for _, name := range slotNames(last.slots) {
		if to, ok := left.elsewhere[name]; ok {
			fmt.Fprintf(w, "%s: %s → %s\n", name, node, to)
		}
	}
}

// slotNames names the slots of left, in order.
func slotNames(slots map[string][]int) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(slots)) {
		for _, s := range slots[id] {
			out = append(out, api.TaskName(id, s))
		}
	}
	return out
}

// readDrainLeft reads the slots assigned to node and the containers its
// reports show.
func readDrainLeft(ctx context.Context, cn *conn, node string) (drainLeft, error) {
	assignments, err := cn.listAssignments(ctx)
	if err != nil {
		return drainLeft{}, err
	}
	reports, err := cn.listReports(ctx, "")
	if err != nil {
		return drainLeft{}, err
	}
	left := drainLeft{slots: map[string][]int{}, elsewhere: map[string]string{}}
	for id, slots := range assignments {
		for slot, a := range slots {
			if a.Node == node {
				left.slots[id] = append(left.slots[id], slot)
			} else {
				left.elsewhere[api.TaskName(id, slot)] = a.Node
			}
		}
		slices.Sort(left.slots[id])
	}
	for _, r := range reports {
		if r.Node == node {
			left.containers += len(r.Tasks)
		}
	}
	return left, nil
}

// drainStuck returns, when every slot left is one the status of its
// controller names as fitting no node, a line per controller naming its
// slots and, in brackets, the status's message; nil when some slot may
// still move.
func (c *cli) drainStuck(ctx context.Context, cn *conn, left drainLeft) ([]string, error) {
	if left.assigned() == 0 {
		return nil, nil
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(left.slots)) {
		st, err := cn.getStatus(ctx, id)
		if errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, registry.ErrNotFound) {
			return nil, nil
		}
		if err != nil || st == nil {
			return nil, err
		}
		cond := st.FindCondition(api.ConditionReplicaFailure)
		if cond == nil || cond.Reason != api.ReasonUnschedulable {
			return nil, nil
		}
		names := make([]string, 0, len(left.slots[id]))
		for _, slot := range left.slots[id] {
			if !namesSlot(cond.Message, slot) {
				return nil, nil
			}
			names = append(names, api.TaskName(id, slot))
		}
		out = append(out, strings.Join(names, ", ")+" ("+cond.Message+")")
	}
	return out, nil
}

// namesSlot reports whether an Unschedulable message, as the leader
// writes it ("slot(s) 1, 2 fit no node: ..."), names slot.
func namesSlot(msg string, slot int) bool {
	head, _, _ := strings.Cut(msg, ":")
	for _, w := range strings.Fields(strings.ReplaceAll(head, ",", " ")) {
		if w == strconv.Itoa(slot) {
			return true
		}
	}
	return false
}
