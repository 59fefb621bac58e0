package main

// get lists controllers as a table joined with the status the manager wrote,
// or prints specs as stored (-o json|yaml), in the form apply reads back.
// A spec that does not decode still gets its table row, marked <invalid>.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// outputFormats are the values of get -o.
var outputFormats = []string{"wide", "json", "yaml"}

func (c *cli) getCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get [ID] [-o wide|json|yaml]",
		Short: "list controllers, or show one",
		Long: `Get prints a table of every controller, or of the one named, with the replicas
the manager last reported. -o wide adds the selector, the available replicas,
the spec's revision, the conditions worth a look, and NODES: the containers
each node reports running, as node:count in node order (<none> when no node
reports on the controller). -o json and -o yaml print the specs as stored, in
the form 'rcctl apply -f' reads back; without an ID they print {"items": [...]}.`,
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && !slices.Contains(outputFormats, output) {
				return usageErrorf("get: unknown output format %q (want wide, json or yaml)", output)
			}
			if len(args) > 1 {
				return usageErrorf("get: at most one ID, got %d", len(args))
			}
			return c.get(cmd.Context(), args, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// view is one controller as get and describe show it: the spec and the
// status, nil when the manager has not written one.
type view struct {
	spec   registry.Spec
	status *api.ReplicationControllerStatus
}

func (c *cli) get(ctx context.Context, args []string, output string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()

	if len(args) == 1 {
		v, err := readView(ctx, cn, args[0])
		if err != nil {
			return err
		}
		switch output {
		case "json", "yaml":
			return printSpec(c.stdout, v.spec, output)
		}
		nodes, err := c.readNodesColumn(ctx, cn, args[0], output == "wide")
		if err != nil {
			return err
		}
		c.printTable(c.stdout, []view{v}, output == "wide", nodes)
		return nil
	}

	views, err := readViews(ctx, cn)
	if err != nil {
		return err
	}
	switch output {
	case "json", "yaml":
		return c.printList(views, output)
	}
	if len(views) == 0 {
		fmt.Fprintln(c.stderr, "No controllers found.")
		return nil
	}
	nodes, err := c.readNodesColumn(ctx, cn, "", output == "wide")
	if err != nil {
		return err
	}
	c.printTable(c.stdout, views, output == "wide", nodes)
	return nil
}

// readNodesColumn returns the NODES cell of -o wide by controller id, from
// the reports on id ("": every controller's); nil when not wide, or when
// the reports cannot be read (every cell then shows <unknown>).
func (c *cli) readNodesColumn(ctx context.Context, cn *conn, id string, wide bool) (map[string]string, error) {
	if !wide {
		return nil, nil
	}
	reports, ok, err := c.readReports(ctx, cn, id)
	if err != nil || !ok {
		return nil, err
	}
	cells := map[string]string{}
	for id, counts := range nodeCounts(reports) {
		cells[id] = formatNodeCounts(counts)
	}
	return cells, nil
}

// readView reads one controller and its status.
func readView(ctx context.Context, cn *conn, id string) (view, error) {
	spec, err := cn.getController(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return view{}, fmt.Errorf("controller %q not found", id)
	}
	if err != nil {
		return view{}, err
	}
	st, err := cn.getStatus(ctx, id)
	if err != nil {
		return view{}, err
	}
	return view{spec: spec, status: st}, nil
}

// readViews reads every controller, in key order, with its status.
func readViews(ctx context.Context, cn *conn) ([]view, error) {
	specs, err := cn.listControllers(ctx)
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, nil
	}
	statuses, err := cn.listStatuses(ctx)
	if err != nil {
		return nil, err
	}
	views := make([]view, len(specs))
	for i, s := range specs {
		views[i] = view{spec: s, status: statuses[s.ID]}
	}
	return views, nil
}

// printTable prints the controllers' table; nodes are the NODES cells of
// -o wide by controller id (nil: the reports could not be read).
func (c *cli) printTable(w io.Writer, views []view, wide bool, nodes map[string]string) {
	tw := newTable(w)
	header := []string{"ID", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AGE", "IMAGE"}
	if wide {
		header = append(header, "SELECTOR", "AVAILABLE", "REVISION", "CONDITIONS", "NODES")
	}
	row(tw, header...)
	now := c.now()
	for _, v := range views {
		desired, image, selector := ctlview.Invalid, ctlview.Invalid, ctlview.Invalid
		if rc := v.spec.Controller; v.spec.Err == nil && rc != nil {
			desired = strconv.Itoa(rc.DesiredState.Replicas)
			image = ctlview.Images(rc)
			selector = formatLabels(rc.DesiredState.ReplicasInSet)
		}
		current, ready, updated, available, created := ctlview.None, ctlview.None, ctlview.None, ctlview.None, ctlview.Unknown
		if st := v.status; st != nil {
			current = strconv.Itoa(st.Replicas)
			ready = strconv.Itoa(st.ReadyReplicas)
			updated = strconv.Itoa(st.UpdatedReplicas)
			available = strconv.Itoa(st.AvailableReplicas)
			created = ctlview.Age(now, st.CreationTimestamp)
		}
		cells := []string{v.spec.ID, desired, current, ready, updated, created, image}
		if wide {
			onNodes := ctlview.Unknown
			if nodes != nil {
				onNodes = cmp.Or(nodes[v.spec.ID], ctlview.None)
			}
			cells = append(cells, selector, available, strconv.FormatInt(v.spec.ModRevision, 10), notableConditions(v.status), onNodes)
		}
		row(tw, cells...)
	}
	_ = tw.Flush()
}

// printSpec prints one spec as stored; a spec that does not decode cannot
// be printed in a form apply reads back, so it is an error.
func printSpec(w io.Writer, spec registry.Spec, output string) error {
	if spec.Err != nil {
		return fmt.Errorf("controller %q: stored spec does not decode: %w", spec.ID, spec.Err)
	}
	var data []byte
	var err error
	if output == "yaml" {
		data, err = api.EncodeYAML(spec.Controller)
	} else {
		data, err = api.Encode(spec.Controller)
	}
	if err != nil {
		return fmt.Errorf("controller %q: %w", spec.ID, err)
	}
	_, err = w.Write(data)
	return err
}

// printList prints {"items": [...]}, as JSON or YAML. Specs that do not
// decode are left out with a warning and make the command fail, so that a
// backup made with 'rcctl get -o json' cannot be silently incomplete.
func (c *cli) printList(views []view, output string) error {
	var rcs []*api.ReplicationController
	var skipped []string
	for _, v := range views {
		if v.spec.Err != nil {
			fmt.Fprintf(c.stderr, "rcctl: controller %q left out: stored spec does not decode: %v\n", v.spec.ID, v.spec.Err)
			skipped = append(skipped, v.spec.ID)
			continue
		}
		rcs = append(rcs, v.spec.Controller)
	}
	encodeList := ctlview.EncodeSpecs
	if output == "yaml" {
		encodeList = encodeYAMLList
	}
	data, err := encodeList(rcs)
	if err != nil {
		return err
	}
	if _, err := c.stdout.Write(data); err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("%d controller(s) left out because their stored spec does not decode: %q", len(skipped), skipped)
	}
	return nil
}

// encodeYAMLList writes "items:" and each item as api.EncodeYAML writes it
// (fields in JSON order, id first), as a YAML sequence.
func encodeYAMLList(rcs []*api.ReplicationController) ([]byte, error) {
	if len(rcs) == 0 {
		return []byte("items: []\n"), nil
	}
	var buf bytes.Buffer
	buf.WriteString("items:\n")
	for _, rc := range rcs {
		data, err := api.EncodeYAML(rc)
		if err != nil {
			return nil, fmt.Errorf("controller %q: %w", rc.ID, err)
		}
		first := true
		for line := range strings.Lines(string(data)) {
			switch {
			case first:
				buf.WriteString("- ")
				first = false
			case line != "\n":
				buf.WriteString("  ")
			}
			buf.WriteString(line)
		}
	}
	return buf.Bytes(), nil
}
