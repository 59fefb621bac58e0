package main

// logs prints the output of a controller's containers, as kubectl logs
// and docker logs do: all of a controller's, a slot's (ID/SLOT), or one
// container's by the name Docker shows (ID-SLOT, ID-SLOT.CONTAINER). Only the local Docker engine (--docker-host) is
// asked: no engine's API is exposed over the network (docs/CONTRACT.md,
// Nodes). For each container the nodes report elsewhere, logs says on
// which node it runs and what to run there.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

func (c *cli) logsCommand() *cobra.Command {
	var opts logOptions
	cmd := &cobra.Command{
		Use:   "logs ID[/SLOT]|CONTAINER [-f] [--tail N]",
		Short: "print the output of a controller's containers on this node",
		Long: `Logs prints what the controller's containers wrote to stdout and stderr (to
stdout and stderr), as docker logs does, from the local Docker engine
(--docker-host). ID/SLOT names one slot's containers (ID-SLOT, and ID-SLOT.NAME
for each other container of its task); a container's name as Docker shows it
(web-1, web-probed-1.prober) names that container alone; ID alone prints every
container of the controller on this engine, in slot order, each line prefixed
with [NAME]. -f follows the output until the containers stop or rcctl is
interrupted; --tail N starts with the last N lines of each.

The containers that the nodes report on other engines are listed on stderr
with their node, the node's manager, and the docker logs command to run on
that node; rcctl fails when none runs here.`,
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("logs: want exactly one ID, ID/SLOT or container name, got %d", len(args))
			}
			id, slot, err := parseLogsTarget(args[0])
			if err != nil {
				return err
			}
			return c.logs(cmd.Context(), logsTarget{id: id, slot: slot}, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.follow, "follow", "f", false, "go on printing the output as it comes")
	cmd.Flags().IntVar(&opts.tail, "tail", -1, "print only the last N lines of each container's output (-1: all)")
	return cmd
}

// parseLogsTarget reads ID or ID/SLOT; slot is 0 without one.
func parseLogsTarget(arg string) (id string, slot int, err error) {
	id, s, hasSlot := strings.Cut(arg, "/")
	if id == "" {
		return "", 0, usageErrorf("logs: %q: the ID is empty (want ID or ID/SLOT)", arg)
	}
	if !hasSlot {
		return id, 0, nil
	}
	slot, err = strconv.Atoi(s)
	if err != nil || slot < 1 {
		return "", 0, usageErrorf("logs: %q: SLOT must be a number from 1, as in %s/1", arg, id)
	}
	return id, slot, nil
}

// logsTarget is what logs prints: the containers of controller id, of
// slot when it is not 0, and only the one called name when that is not "".
type logsTarget struct {
	id   string
	slot int
	name string
}

// what names the target in errors: the container, the slot's first
// container, or the controller.
func (t logsTarget) what() string {
	switch {
	case t.name != "":
		return t.name
	case t.slot > 0:
		return api.TaskName(t.id, t.slot)
	}
	return fmt.Sprintf("controller %q", t.id)
}

// resolveLogsTarget reads a target given as a controller id (t.slot 0)
// that is no controller's as the name of a container, as Docker shows it
// (<id>-<slot>, <id>-<slot>.<container>), of a controller that exists.
func resolveLogsTarget(ctx context.Context, cn *conn, t logsTarget) (logsTarget, error) {
	_, err := cn.getController(ctx, t.id)
	switch {
	case err == nil:
		return t, nil
	case !errors.Is(err, registry.ErrNotFound):
		return t, err
	case t.slot > 0: // ID/SLOT names a controller
		return t, fmt.Errorf("controller %q not found", t.id)
	}
	for _, c := range containerTargets(t.id) {
		_, err := cn.getController(ctx, c.id)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, registry.ErrNotFound) {
			return t, err
		}
	}
	return t, fmt.Errorf("controller %q not found, nor a container of that name", t.id)
}

// containerTargets are the readings of name as a container's name, the
// longest controller id first: an id may hold '-' and '.', so "a-1.b-2"
// is container b-2 of a-1 and slot 2 of a-1.b (api.ParseTaskName).
func containerTargets(name string) []logsTarget {
	var out []logsTarget
	for i := len(name) - 1; i > 0; i-- {
		if name[i] != '-' {
			continue
		}
		id := name[:i]
		if slot, _, ok := api.ParseTaskName(id, name); ok {
			out = append(out, logsTarget{id: id, slot: slot, name: name})
		}
	}
	return out
}

func (c *cli) logs(ctx context.Context, target logsTarget, opts logOptions) error {
	if opts.tail < -1 {
		return usageErrorf("logs: --tail must be -1 (all) or more, got %d", opts.tail)
	}
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	target, err = resolveLogsTarget(ctx, cn, target)
	if err != nil {
		return err
	}
	id := target.id
	registryID, err := readRegistryID(ctx, cn)
	if err != nil {
		return err
	}
	reports, _, err := c.readReports(ctx, cn, id)
	if err != nil {
		return err
	}

	src, closeSrc, err := c.dialLogs(c.opts.dockerHost)
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	if closeSrc != nil {
		defer closeSrc()
	}
	local, err := c.localContainers(ctx, src, id, target.slot, registryID)
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	if target.name != "" {
		local = slices.DeleteFunc(local, func(t api.Task) bool { return t.Name != target.name })
	}
	remote := remoteContainers(reports, local, target)
	if len(remote) > 0 {
		c.printRemote(ctx, cn, remote, opts)
	}
	if len(local) == 0 {
		return noLocalContainer(target, len(remote) > 0)
	}
	return c.printLogs(ctx, src, local, opts)
}

// noLocalContainer is the error when the local engine has no container
// of target to print: remote says whether some run elsewhere (printed
// already).
func noLocalContainer(target logsTarget, remote bool) error {
	id := target.id
	switch {
	case target.slot > 0 && remote:
		return fmt.Errorf("%s does not run on this Docker engine; see its node above", target.what())
	case target.slot > 0:
		return fmt.Errorf("%s is not on this Docker engine, and no node reports it", target.what())
	case remote:
		return fmt.Errorf("no container of controller %q runs on this Docker engine; see the node of each above", id)
	}
	return fmt.Errorf("no container of controller %q is on this Docker engine, and no node reports one", id)
}

// localContainers are the containers of controller id (of slot, when not
// 0) on the local engine and of this registry, in slot order.
func (c *cli) localContainers(ctx context.Context, src logSource, id string, slot int, registryID string) ([]api.Task, error) {
	selector := map[string]string{api.LabelController: id}
	if slot > 0 {
		selector[api.LabelSlot] = strconv.Itoa(slot)
	}
	listCtx, cancel := context.WithTimeout(ctx, c.opts.dialTimeout)
	defer cancel()
	tasks, err := src.ListTasks(listCtx, selector)
	if err != nil {
		return nil, err
	}
	var ours []api.Task
	for _, t := range tasks {
		if api.OfRegistry(registryID, t.Labels) {
			ours = append(ours, t)
		}
	}
	slices.SortFunc(ours, func(a, b api.Task) int {
		sa, _ := strconv.Atoi(a.Labels[api.LabelSlot])
		sb, _ := strconv.Atoi(b.Labels[api.LabelSlot])
		if sa != sb {
			return sa - sb
		}
		return strings.Compare(a.Name, b.Name)
	})
	return ours, nil
}

// remoteContainer is a container a node reports that is not on the local
// engine.
type remoteContainer struct {
	name, node string
}

// remoteContainers are the containers of target the reports name that the
// local engine does not have, by node and name.
func remoteContainers(reports []api.NodeReport, local []api.Task, target logsTarget) []remoteContainer {
	here := map[string]bool{}
	for _, t := range local {
		here[t.Name] = true
	}
	var out []remoteContainer
	for _, r := range reports {
		for _, t := range r.Tasks {
			if here[t.Name] || (target.slot > 0 && t.Slot != target.slot) || (target.name != "" && t.Name != target.name) {
				continue
			}
			out = append(out, remoteContainer{name: t.Name, node: r.Node})
		}
	}
	slices.SortFunc(out, func(a, b remoteContainer) int {
		return strings.Compare(a.node+"\x00"+a.name, b.node+"\x00"+b.name)
	})
	return out
}

// printRemote says on stderr where each remote container runs and what
// to run there.
func (c *cli) printRemote(ctx context.Context, cn *conn, remote []remoteContainer, opts logOptions) {
	managers := map[string]string{}
	if nodes, err := cn.listNodes(ctx); err == nil {
		for _, n := range nodes {
			managers[n.Name] = n.Manager
		}
	}
	flags := ""
	if opts.follow {
		flags += " -f"
	}
	if opts.tail >= 0 {
		flags += " --tail " + strconv.Itoa(opts.tail)
	}
	for _, r := range remote {
		where := "node " + r.node
		if m := managers[r.node]; m != "" {
			where += " (manager " + m + ")"
		}
		fmt.Fprintf(c.stderr, "%s runs on %s; on that node run: docker logs%s %s\n", r.name, where, flags, r.name)
	}
}

// printLogs prints the output of the containers: one as it is, several
// each line prefixed with [NAME], one after the other, or all at once
// when following.
func (c *cli) printLogs(ctx context.Context, src logSource, tasks []api.Task, opts logOptions) error {
	if len(tasks) == 1 {
		return src.Logs(ctx, tasks[0].ID, opts, c.stdout, c.stderr)
	}
	var mu sync.Mutex // one line at a time on each stream
	one := func(t api.Task) error {
		stdout := &prefixWriter{mu: &mu, w: c.stdout, prefix: "[" + t.Name + "] "}
		stderr := &prefixWriter{mu: &mu, w: c.stderr, prefix: "[" + t.Name + "] "}
		err := src.Logs(ctx, t.ID, opts, stdout, stderr)
		return errors.Join(err, stdout.flush(), stderr.flush())
	}
	if !opts.follow {
		for _, t := range tasks {
			if err := one(t); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Go(func() { errs[i] = one(t) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prefixWriter writes whole lines to w, each after prefix, under mu; a
// last line without a newline is written by flush.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	i := bytes.LastIndexByte(p.buf, '\n')
	if i < 0 {
		return len(b), nil
	}
	err := p.write(p.buf[:i+1])
	p.buf = append(p.buf[:0], p.buf[i+1:]...)
	return len(b), err
}

func (p *prefixWriter) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	err := p.write(append(p.buf, '\n'))
	p.buf = nil
	return err
}

func (p *prefixWriter) write(lines []byte) error {
	var out bytes.Buffer
	for line := range bytes.Lines(lines) {
		out.WriteString(p.prefix)
		out.Write(line)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.w.Write(out.Bytes())
	return err
}
