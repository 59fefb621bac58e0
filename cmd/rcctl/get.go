package main

// get lists controllers as a table joined with the status the manager wrote,
// or prints them as documents (-o json|yaml|jsonpath=...: each spec as
// stored with its status under currentState, in the form apply reads back)
// or as names (-o name). -l selects by the controllers' labels, and
// --watch goes on printing each change (watch.go). A spec that does not
// decode still gets its table row, marked <invalid>.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// getOutputFormats are the values of get -o.
var getOutputFormats = []string{outputWide, outputJSON, outputYAML, outputName, outputJSONPath}

// getOptions are get's flags, parsed.
type getOptions struct {
	out   output
	sel   selector
	watch bool
}

func (c *cli) getCommand() *cobra.Command {
	var outputFlag, selectorFlag string
	var watch bool
	cmd := &cobra.Command{
		Use:   "get [ID] [-o wide|json|yaml|name|jsonpath=TEMPLATE] [-l key=value,...] [-w]",
		Short: "list controllers, or show one",
		Long: `Get prints a table of every controller, or of the one named, with the replicas
the manager last reported and its STATUS in one word, as kubectl get pods
shows CrashLoopBackOff: the first thing wrong (InvalidSpec, Pending, CrashLoop,
ImageNotFound or another ReplicaFailure reason such as Unschedulable, Blocked,
ProgressDeadlineExceeded), else Paused, Progressing, Running or ScaledToZero
(rcctl describe shows the conditions it comes from). -o wide adds the
selector, the available replicas, the spec's etcd revision (ETCD-REVISION;
rollout history numbers the templates 1, 2, 3), the conditions worth a look,
NODES: the containers each node reports running, as node:count in node
order (<none> when no node reports on the controller), followed by the slots
waiting for their image's pull, as (node:count pulling), and IMAGE-IDS: the
images they run, as short image ID:count (two IDs of one template are an
ImageDrift; rcctl describe shows the full IDs and repo digests).

-o json and -o yaml print each spec as stored, with the status the manager last
wrote under "currentState" (absent before its first); without an ID they print
{"items": [...]}. 'rcctl apply -f' reads that output back and ignores
currentState, so an unchanged spec is reported unchanged and nothing is written.
-o name prints controller/ID per controller. -o jsonpath=TEMPLATE prints the
JSON document through a kubectl JSONPath template, such as
-o jsonpath='{.currentState.readyReplicas}' with an ID, or
-o jsonpath='{range .items[*]}{.id}{"\n"}{end}' without.

-l key=value[,key=value...] lists only the controllers whose own "labels"
contain every pair (not the selector replicasInSet, nor the template's labels),
as kubectl's -l does; it does not go with an ID.

-w (--watch) prints the list, then a line (a row, a name, or a document) each
time a listed controller's spec or status changes, and the last one seen of a
deleted controller, until interrupted. A change that leaves the line as it
was prints nothing.`,
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := parseOutput("get", outputFlag, getOutputFormats)
			if err != nil {
				return err
			}
			if len(args) > 1 {
				return usageErrorf("get: at most one ID, got %d", len(args))
			}
			sel, err := parseSelector("get", selectorFlag)
			if err != nil {
				return err
			}
			if len(args) == 1 && sel != nil {
				return usageErrorf("get: an ID and -l do not go together (the ID names one controller)")
			}
			return c.get(cmd.Context(), args, getOptions{out: out, sel: sel, watch: watch})
		},
	}
	addOutputFlag(cmd, &outputFlag, getOutputFormats)
	cmd.Flags().StringVarP(&selectorFlag, "selector", "l", "", "only the controllers whose labels contain every key=value pair, comma-separated")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after the list, print each change until interrupted")
	return cmd
}

// view is one controller as get and describe show it: the spec and the
// status, nil when the manager has not written one.
type view struct {
	spec   registry.Spec
	status *api.ReplicationControllerStatus
}

func (c *cli) get(ctx context.Context, args []string, opts getOptions) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	c.warnLeaderless(ctx, cn)

	id := ""
	if len(args) == 1 {
		id = args[0]
	}
	// the revision before the read: a watch from the next one misses no
	// change (one seen twice prints once, as it prints the same line)
	rev, err := cn.currentRevision(ctx)
	if err != nil {
		return err
	}
	var views []view
	if id != "" {
		v, err := readView(ctx, cn, id)
		if err != nil {
			return err
		}
		views = []view{v}
	} else {
		all, err := readViews(ctx, cn)
		if err != nil {
			return err
		}
		for _, v := range all {
			if opts.sel.matches(v.spec.Controller) {
				views = append(views, v)
			}
		}
	}
	if opts.watch {
		return c.watch(ctx, cn, id, opts, views, rev)
	}
	return c.printViews(ctx, cn, id, opts.out, views)
}

// printViews prints what get lists, once.
func (c *cli) printViews(ctx context.Context, cn *conn, id string, out output, views []view) error {
	switch {
	case out.format == outputName:
		for _, v := range views {
			fmt.Fprintln(c.stdout, controllerName(v.spec.ID))
		}
		return nil
	case out.document() && id != "":
		doc, err := viewDocument(views[0])
		if err != nil {
			return err
		}
		return out.writeDocument(c.stdout, doc)
	case out.document():
		return c.printList(views, out)
	}
	if len(views) == 0 {
		fmt.Fprintln(c.stderr, "No controllers found.")
		return nil
	}
	nodes, err := c.readNodesColumn(ctx, cn, id, out.format == outputWide)
	if err != nil {
		return err
	}
	tw := newTable(c.stdout)
	row(tw, tableHeader(out.format == outputWide)...)
	for _, v := range views {
		row(tw, c.tableRow(v, out.format == outputWide, nodes)...)
	}
	return tw.Flush()
}

// controllerName is a controller as -o name prints it.
func controllerName(id string) string { return "controller/" + id }

// currentRevision is etcd's revision now.
func (cn *conn) currentRevision(ctx context.Context) (int64, error) {
	return call(ctx, cn, func(ctx context.Context) (int64, error) {
		resp, err := cn.client.Get(ctx, cn.store.ControllersPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return 0, err
		}
		return resp.Header.Revision, nil
	})
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
	for id, pulling := range pullingCounts(reports) {
		cells[id] += " (" + formatNodeCounts(pulling) + " pulling)"
	}
	return cells, nil
}

// readView reads one controller and its status.
func readView(ctx context.Context, cn *conn, id string) (view, error) {
	spec, err := cn.getController(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return view{}, &notFoundError{id: id}
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

// notFoundError is readView's error for a controller that does not
// exist; it wraps registry.ErrNotFound.
type notFoundError struct{ id string }

func (e *notFoundError) Error() string { return fmt.Sprintf("controller %q not found", e.id) }
func (e *notFoundError) Unwrap() error { return registry.ErrNotFound }

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

// tableHeader is the header of get's table.
func tableHeader(wide bool) []string {
	header := []string{"ID", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "STATUS", "AGE", "IMAGE"}
	if wide {
		header = append(header, "SELECTOR", "AVAILABLE", "ETCD-REVISION", "CONDITIONS", "NODES", "IMAGE-IDS")
	}
	return header
}

// tableRow is one controller's row; nodes are the NODES cells of -o wide
// by controller id (nil: the reports could not be read).
func (c *cli) tableRow(v view, wide bool, nodes map[string]string) []string {
	desired, image, selector := ctlview.Invalid, ctlview.Invalid, ctlview.Invalid
	status := ctlview.Status(v.spec.Controller, v.status, v.spec.Err)
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
		created = ctlview.Age(c.now(), st.CreationTimestamp)
	}
	cells := []string{v.spec.ID, desired, current, ready, updated, status, created, image}
	if wide {
		onNodes := ctlview.Unknown
		if nodes != nil {
			onNodes = cmp.Or(nodes[v.spec.ID], ctlview.None)
		}
		cells = append(cells, selector, available, strconv.FormatInt(v.spec.ModRevision, 10), notableConditions(v.status), onNodes,
			ctlview.ImageIDs(v.status))
	}
	return cells
}

// viewDocument is one controller as -o json prints it: the spec as
// stored, with the status under currentState. A spec that does not decode
// cannot be printed in a form apply reads back, so it is an error.
func viewDocument(v view) ([]byte, error) {
	if v.spec.Err != nil {
		return nil, fmt.Errorf("controller %q: stored spec does not decode: %w", v.spec.ID, v.spec.Err)
	}
	return ctlview.EncodeWithStatus(v.spec.Controller, v.status)
}

// printList prints {"items": [...]} in the document format. Specs that do
// not decode are left out with a warning and make the command fail, so
// that a backup made with 'rcctl get -o json' cannot be silently
// incomplete.
func (c *cli) printList(views []view, out output) error {
	rcs := []*api.ReplicationController{}
	statuses := map[string]*api.ReplicationControllerStatus{}
	var skipped []string
	for _, v := range views {
		if v.spec.Err != nil {
			fmt.Fprintf(c.stderr, "rcctl: controller %q left out: stored spec does not decode: %v\n", v.spec.ID, v.spec.Err)
			skipped = append(skipped, v.spec.ID)
			continue
		}
		rcs = append(rcs, v.spec.Controller)
		statuses[v.spec.ID] = v.status
	}
	doc, err := ctlview.EncodeListWithStatus(rcs, statuses)
	if err != nil {
		return err
	}
	if err := out.writeDocument(c.stdout, doc); err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("%d controller(s) left out because their stored spec does not decode: %q", len(skipped), skipped)
	}
	return nil
}
