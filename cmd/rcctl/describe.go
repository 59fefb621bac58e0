package main

// describe shows one controller in full: its spec (environment names only,
// never values), the status and conditions the manager wrote, and its
// containers: those the local Docker reports, each with the node whose
// report lists it, and those only other nodes report (docs/CONTRACT.md,
// Nodes). When Docker cannot be asked, the containers come from the reports
// alone; when there are no reports either, the etcd parts are still
// printed and the command fails.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

func (c *cli) describeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "describe ID",
		Short: "show a controller's spec, status, conditions and containers",
		Long: `Describe prints the spec of one controller (environment variable names only:
values are never printed), the status and conditions the manager last wrote,
and the controller's containers with the node of each: those the local Docker
reports (a container no node's report lists, such as an exited one kept for
inspection, has NODE <none>), and those the other nodes report running. When
the local Docker cannot be asked, the containers are those the nodes report.
Each container shows the short ID of the image it runs (IMAGE-ID); under
Images, each image the nodes report with its full ID, the repo digest a
registry knows it by (when the engine knows one) and how many containers
run it.`,
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("describe: want exactly one ID, got %d", len(args))
			}
			return c.describe(cmd.Context(), args[0])
		},
	}
}

func (c *cli) describe(ctx context.Context, id string) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	v, err := readView(ctx, cn, id)
	if err != nil {
		return err
	}
	events, err := call(ctx, cn, func(ctx context.Context) ([]api.Event, error) {
		return cn.store.ListEvents(ctx, id)
	})
	if err != nil {
		return err
	}
	// the history is shown when it can be read: a user whose etcd role
	// lacks read on it still gets the rest
	revisions, revErr := listRevisions(ctx, cn, id)
	registryID, err := readRegistryID(ctx, cn)
	if err != nil {
		return err
	}
	reports, reportsOK, err := c.readReports(ctx, cn, id)
	if err != nil {
		return err
	}
	tasks, taskErr := c.listContainers(ctx, id, registryID)
	if taskErr != nil && len(reports) > 0 {
		fmt.Fprintf(c.stderr, "warning: the local Docker cannot be asked, so the containers are those the nodes report: %s\n", oneLine(taskErr))
		tasks, taskErr = nil, nil
	}

	kv := newFieldTable(c.stdout)
	printSpecFields(kv, v, revisions, revErr == nil)
	c.printStatusFields(kv, v)
	_ = kv.Flush()
	c.printConditions(c.stdout, v.status)
	if taskErr != nil {
		field(c.stdout, "Containers:", fmt.Sprintf("<unavailable: %s>", oneLine(taskErr)))
	} else {
		c.printContainers(c.stdout, containerRows(tasks, reports, reportsOK))
	}
	printImages(c.stdout, v.status)
	c.printPulling(c.stdout, reports)
	c.printOnGoneNodes(ctx, cn, c.stdout, id)
	printRecentRevisions(c.stdout, runningHash(v.spec, v.status), revisions, revErr)
	c.printEvents(c.stdout, events)
	if taskErr != nil {
		return fmt.Errorf("containers of controller %q unavailable: %w", id, taskErr)
	}
	return nil
}

// describeRevisions is how many of the newest recorded revisions describe
// shows; rcctl rollout history shows them all.
const describeRevisions = 3

// printRecentRevisions shows the newest recorded templates, oldest first,
// as rollout history does, the one that runs (running, runningHash)
// marked, or why they could not be read (err).
func printRecentRevisions(w io.Writer, running string, revs []api.Revision, err error) {
	if err != nil {
		field(w, "Recent revisions:", fmt.Sprintf("<unavailable: %s>", oneLine(err)))
		return
	}
	if len(revs) == 0 {
		field(w, "Recent revisions:", ctlview.None)
		return
	}
	fmt.Fprintln(w, "Recent revisions:")
	printRevisions(w, "  ", revs[max(0, len(revs)-describeRevisions):], running, false)
}

// describeEvents is how many of the newest events describe shows.
const describeEvents = 20

// printEvents shows the controller's newest events, oldest first; the
// manager keeps them for about an hour.
func (c *cli) printEvents(w io.Writer, events []api.Event) {
	if len(events) == 0 {
		field(w, "Events:", ctlview.None)
		return
	}
	if len(events) > describeEvents {
		events = events[len(events)-describeEvents:]
	}
	now := c.now()
	fmt.Fprintln(w, "Events:")
	tw := newTable(w)
	row(tw, "  AGE", "TYPE", "REASON", "MESSAGE")
	for _, ev := range events {
		row(tw, "  "+ctlview.Age(now, ev.Time), ev.Type, ev.Reason, ctlview.OneLineString(ev.Message))
	}
	_ = tw.Flush()
}

// fieldWidth is the width of the label column of describe's "Label: value"
// lines; labels longer than that widen their block.
const fieldWidth = 20

func newFieldTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, fieldWidth, 8, 1, ' ', 0)
}

// field prints one "Label: value" line outside a field table, aligned
// with those inside.
func field(w io.Writer, label, value string) {
	fmt.Fprintf(w, "%-*s%s\n", fieldWidth, label, value)
}

// listContainers asks Docker for the controller's containers of this
// registry, by the 2014 label and the registry's, so that containers the
// selector no longer matches show too and another registry's do not.
func (c *cli) listContainers(ctx context.Context, id, registryID string) ([]api.Task, error) {
	lister, closeLister, err := c.dialDocker(c.opts.dockerHost)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if closeLister != nil {
		defer closeLister()
	}
	listCtx, cancel := context.WithTimeout(ctx, c.opts.dialTimeout)
	defer cancel()
	tasks, err := lister.ListTasks(listCtx, map[string]string{api.LabelController: id})
	if err != nil {
		return nil, err
	}
	ours := tasks[:0]
	for _, t := range tasks {
		if api.OfRegistry(registryID, t.Labels) {
			ours = append(ours, t)
		}
	}
	return ours, nil
}

// printSpecFields shows the spec; revs is its history, when it could be
// read (revsOK).
func printSpecFields(tw io.Writer, v view, revs []api.Revision, revsOK bool) {
	row(tw, "ID:", v.spec.ID)
	rc := v.spec.Controller
	if v.spec.Err != nil || rc == nil {
		row(tw, "Spec:", fmt.Sprintf("<invalid: %s>", oneLine(v.spec.Err)))
		row(tw, "Revision:", fmt.Sprintf("%s (the spec is at etcd revision %d)", ctlview.None, v.spec.ModRevision))
		return
	}
	ds := rc.DesiredState
	row(tw, "Labels:", formatLabels(rc.Labels))
	row(tw, "Selector:", formatLabels(ds.ReplicasInSet))
	row(tw, "Replicas:", fmt.Sprintf("%d desired", ds.Replicas))
	if ds.MinReadySeconds > 0 {
		row(tw, "Min ready:", fmt.Sprintf("%ds", ds.MinReadySeconds))
	}
	printStrategy(tw, ds)
	row(tw, "Template labels:", formatLabels(ds.TaskTemplate.Labels))
	if at := ds.TaskTemplate.RestartedAt; at != "" {
		row(tw, "Restarted at:", at)
	}
	containers := ds.TaskTemplate.DesiredState.Manifest.Containers
	for i, ctr := range containers {
		prefix := ""
		if len(containers) > 1 {
			row(tw, fmt.Sprintf("Container %d:", i+1), ctlview.OrNone(ctr.Name))
			prefix = "  "
		} else if ctr.Name != "" {
			row(tw, "Container:", ctr.Name)
		}
		printContainer(tw, prefix, ctr)
	}
	for i, ctr := range ds.TaskTemplate.DesiredState.Manifest.InitContainers {
		row(tw, fmt.Sprintf("Init container %d:", i+1), ctr.Name)
		printContainer(tw, "  ", ctr)
	}
	row(tw, "Revision:", formatRevision(v.spec.ModRevision, revs, revsOK, api.TemplateHash(&ds.TaskTemplate)))
}

// printContainer shows the fields of one container of the template, each
// line after prefix; environment values may be secrets: only names show.
func printContainer(tw io.Writer, prefix string, ctr api.Container) {
	row(tw, prefix+"Image:", ctlview.OrNone(ctr.Image))
	row(tw, prefix+"Command:", ctlview.OrNone(ctlview.FormatCommand(ctr.Command)))
	if ctr.WorkingDir != "" {
		row(tw, prefix+"Working dir:", ctr.WorkingDir)
	}
	ports := make([]string, len(ctr.Ports))
	for j, p := range ctr.Ports {
		ports[j] = ctlview.FormatPort(p)
	}
	row(tw, prefix+"Ports:", ctlview.OrNone(strings.Join(ports, ", ")))
	if len(ctr.Env) == 0 {
		row(tw, prefix+"Environment:", ctlview.None)
	} else {
		fmt.Fprintln(tw, prefix+"Environment:")
		for _, e := range ctr.Env {
			// Values may be secrets: only the name is printed.
			row(tw, prefix+"  "+e.Name+":", ctlview.Hidden)
		}
	}
	row(tw, prefix+"Memory:", ctlview.FormatMemory(ctr.Memory))
	row(tw, prefix+"CPU shares:", ctlview.FormatCPU(ctr.CPU))
	if ctr.HealthCheck != nil {
		row(tw, prefix+"Health check:", ctlview.FormatHealthCheck(ctr.HealthCheck))
	}
	printSecurityFields(tw, prefix, ctr)
}

// formatRevision is describe's Revision: the number of the recorded
// revision of the spec's template (hash), as rollout history lists it,
// and the etcd revision the spec is at.
func formatRevision(specRev int64, revs []api.Revision, revsOK bool, hash string) string {
	if i := currentRevision(revs, hash); i >= 0 {
		return fmt.Sprintf("%d (the spec is at etcd revision %d)", revs[i].Number, specRev)
	}
	if !revsOK {
		return fmt.Sprintf("%s (the spec is at etcd revision %d; the history cannot be read)", ctlview.Unknown, specRev)
	}
	return fmt.Sprintf("%s (the spec is at etcd revision %d; the manager records its template when it first acts on it)", ctlview.None, specRev)
}

// printStrategy shows the update strategy with its defaults filled in, the
// progress deadline when the spec sets one, and whether the rollout is
// paused.
func printStrategy(tw io.Writer, ds api.ReplicationControllerState) {
	for _, f := range ctlview.StrategyFields(ds) {
		row(tw, f[0], f[1])
	}
}

// printSecurityFields shows the fields that weaken the container's
// isolation from the host, only when they are set.
func printSecurityFields(tw io.Writer, prefix string, ctr api.Container) {
	for _, f := range ctlview.SecurityFields(ctr) {
		row(tw, prefix+f[0], f[1])
	}
}

func (c *cli) printStatusFields(tw io.Writer, v view) {
	now := c.now()
	st := v.status
	if st == nil {
		row(tw, "Status:", "<none> (the manager has not reported on this controller yet)")
		return
	}
	row(tw, "Status:", fmt.Sprintf("%d current / %d ready / %d available", st.Replicas, st.ReadyReplicas, st.AvailableReplicas))
	observed := fmt.Sprintf("etcd revision %d", st.ObservedRevision)
	if st.ObservedRevision == v.spec.ModRevision {
		observed += " (up to date)"
	} else {
		observed += fmt.Sprintf(" (the spec is at etcd revision %d; the manager has not acted on it yet)", v.spec.ModRevision)
	}
	row(tw, "Observed:", observed)
	row(tw, "Last sync:", ctlview.FormatTime(now, st.LastSyncTime))
	row(tw, "Created:", ctlview.FormatTime(now, st.CreationTimestamp))
}

func (c *cli) printConditions(w io.Writer, st *api.ReplicationControllerStatus) {
	if st == nil || len(st.Conditions) == 0 {
		field(w, "Conditions:", ctlview.None)
		return
	}
	now := c.now()
	fmt.Fprintln(w, "Conditions:")
	tw := newTable(w)
	row(tw, "  TYPE", "STATUS", "REASON", "MESSAGE", "AGE")
	for _, cond := range st.Conditions {
		row(tw, "  "+cond.Type, cond.Status, ctlview.OrNone(cond.Reason), ctlview.OrNone(ctlview.OneLineString(cond.Message)), ctlview.Age(now, cond.LastTransitionTime))
	}
	_ = tw.Flush()
}

// containerRow is one line of describe's Containers table.
type containerRow struct {
	name, node, slot, state, health string
	created                         time.Time
	// imageID is the image the container runs; "" when unknown.
	imageID string
}

// containerRows merges the containers of the local Docker with the nodes'
// reports: a local container gets the node of the report that lists its
// id (<none> when none does, <unknown> when the reports could not be
// read), and the containers only the reports list are added as reported.
func containerRows(local []api.Task, reports []api.NodeReport, reportsOK bool) []containerRow {
	nodeOf := map[string]string{}
	for _, r := range reports {
		for _, t := range r.Tasks {
			if _, seen := nodeOf[t.ID]; !seen && t.ID != "" {
				nodeOf[t.ID] = r.Node
			}
			for _, p := range t.Parts {
				if _, seen := nodeOf[p.ID]; !seen && p.ID != "" {
					nodeOf[p.ID] = r.Node
				}
			}
		}
	}
	rows := make([]containerRow, 0, len(local)+len(nodeOf))
	shown := map[string]bool{}
	for _, t := range local {
		node, ok := nodeOf[t.ID]
		switch {
		case !reportsOK:
			node = ctlview.Unknown
		case !ok:
			node = ctlview.None
		}
		shown[t.ID] = true
		rows = append(rows, containerRow{name: strings.TrimPrefix(t.Name, "/"), node: node, slot: t.Labels[api.LabelSlot],
			state: t.State, health: t.Health, created: t.Created, imageID: t.ImageID})
	}
	for _, r := range reports {
		for _, t := range r.Tasks {
			if shown[t.ID] {
				continue
			}
			shown[t.ID] = true
			slot := ""
			if t.Slot > 0 {
				slot = strconv.Itoa(t.Slot)
			}
			rows = append(rows, containerRow{name: strings.TrimPrefix(t.Name, "/"), node: r.Node, slot: slot,
				state: t.State, health: t.Health, created: t.Created, imageID: t.ImageID})
			for _, p := range t.Parts { // the task's other containers
				if !shown[p.ID] {
					shown[p.ID] = true
					rows = append(rows, containerRow{name: p.Name, node: r.Node, slot: slot, state: p.State, health: p.Health, created: t.Created,
						imageID: p.ImageID})
				}
			}
		}
	}
	return rows
}

// printImages shows the images the status says the containers run, with
// their full IDs and repo digests; the Containers table shows which
// container runs which, by short ID.
func printImages(w io.Writer, st *api.ReplicationControllerStatus) {
	if st == nil || len(st.Images) == 0 {
		field(w, "Images:", ctlview.None)
		return
	}
	fmt.Fprintln(w, "Images:")
	tw := newTable(w)
	row(tw, "  IMAGE", "IMAGE-ID", "REPO-DIGEST", "CONTAINERS")
	for _, im := range st.Images {
		row(tw, "  "+im.Image, im.ImageID, ctlview.OrNone(im.RepoDigest), strconv.Itoa(im.Containers))
	}
	_ = tw.Flush()
}

// printPulling prints the slots the nodes report waiting for their
// image's pull, with how long it has taken; nothing when none waits.
func (c *cli) printPulling(w io.Writer, reports []api.NodeReport) {
	type pulling struct {
		node string
		api.PullingSlot
	}
	var rows []pulling
	for _, r := range reports {
		for _, p := range r.Pulling {
			rows = append(rows, pulling{r.Node, p})
		}
	}
	if len(rows) == 0 {
		return
	}
	slices.SortFunc(rows, func(a, b pulling) int { return cmp.Or(cmp.Compare(a.Slot, b.Slot), strings.Compare(a.node, b.node)) })
	fmt.Fprintln(w, "Pulling:")
	tw := newTable(w)
	row(tw, "  SLOT", "NODE", "IMAGE", "FOR")
	now := c.now()
	for _, p := range rows {
		row(tw, "  "+strconv.Itoa(p.Slot), p.node, p.Image, ctlview.Age(now, p.Since))
	}
	_ = tw.Flush()
}

func (c *cli) printContainers(w io.Writer, rows []containerRow) {
	if len(rows) == 0 {
		field(w, "Containers:", ctlview.None)
		return
	}
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b containerRow) int {
		return cmp.Or(cmp.Compare(ctlview.SlotOrder(a.slot), ctlview.SlotOrder(b.slot)), strings.Compare(a.name, b.name), strings.Compare(a.node, b.node))
	})
	fmt.Fprintln(w, "Containers:")
	tw := newTable(w)
	row(tw, "  NAME", "NODE", "SLOT", "STATE", "HEALTH", "CREATED", "IMAGE-ID")
	now := c.now()
	for _, r := range rows {
		created := ctlview.Unknown
		if !r.created.IsZero() {
			created = ctlview.Age(now, r.created) + " ago"
		}
		imageID := ctlview.Unknown
		if r.imageID != "" {
			imageID = api.ShortImageID(r.imageID)
		}
		row(tw, "  "+r.name, r.node, ctlview.OrNone(r.slot), ctlview.OrNone(r.state), ctlview.OrNone(r.health), created, imageID)
	}
	_ = tw.Flush()
}
