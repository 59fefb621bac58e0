package main

// rollout history lists the templates the manager recorded for a
// controller (under /registry/history/controllers/<id>/<revision>, the
// newest --revision-history-limit of them), oldest first, and marks the
// one that runs now: the spec's, or the one the leader restored when it
// rolled a failed rollout back (status.rollout). describe shows the last
// few the same way.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// historyOutputFormats are the values of rollout history -o.
var historyOutputFormats = []string{outputWide, outputJSON, outputYAML, outputName, outputJSONPath}

func (c *cli) rolloutHistoryCommand() *cobra.Command {
	var outputFlag string
	cmd := &cobra.Command{
		Use:   "history ID [-o wide|json|yaml|name|jsonpath=TEMPLATE]",
		Short: "list the templates a controller ran",
		Long: `Rollout history lists the task templates the manager recorded for the
controller, oldest first: its number (1 for the controller's first template,
as kubectl numbers revisions; rollout undo --to-revision takes it), when the
manager first acted on it, its image, and a * on the one that runs now: the
spec's, or, once the manager rolled a failed rollout back
(updateStrategy.failureAction rollback), the one it restored. The manager keeps
the newest --revision-history-limit (default 10); a pruned revision's number is
not reused.

-o wide adds each revision's ETCD-REVISION (of the spec that brought it) and
TEMPLATE-HASH. -o json prints {"items": [...]}, oldest first, each the revision as the
manager recorded it (number; revision, the etcd revision of the spec that
brought it; firstSeen, templateHash, taskTemplate) and "current": true on the
current one; -o yaml the same as YAML, -o jsonpath=TEMPLATE through a kubectl
JSONPath template, and -o name revision/N per revision.`,
		Args:              oneID("history"),
		ValidArgsFunction: c.completeID,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := parseOutput("rollout history", outputFlag, historyOutputFormats)
			if err != nil {
				return err
			}
			return c.rolloutHistory(cmd.Context(), args[0], out)
		},
	}
	addOutputFlag(cmd, &outputFlag, historyOutputFormats)
	return cmd
}

func (c *cli) rolloutHistory(ctx context.Context, id string, out output) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	spec, revs, err := readHistory(ctx, cn, id)
	if err != nil {
		return err
	}
	st, err := cn.getStatus(ctx, id)
	if err != nil {
		return err
	}
	if spec.Err != nil {
		fmt.Fprintf(c.stderr, "warning: controller %q: stored spec does not decode, so no revision is marked current: %v\n", id, spec.Err)
	}
	hash := runningHash(spec, st)
	switch {
	case out.document():
		return c.printHistoryDocument(revs, hash, out)
	case out.format == outputName:
		for _, r := range revs {
			fmt.Fprintf(c.stdout, "revision/%d\n", r.Number)
		}
		return nil
	}
	if len(revs) == 0 {
		fmt.Fprintf(c.stderr, "No revisions recorded for %s (the manager records a template when it first acts on it).\n", id)
		return nil
	}
	printRevisions(c.stdout, "", revs, hash, out.format == outputWide)
	return nil
}

// runningHash is the hash of the template the controller runs now: the
// spec's, or, while the leader holds a failed rollout rolled back
// (status.rollout), the last one whose rollout completed, which it
// restored. "" when the spec does not decode.
func runningHash(spec registry.Spec, st *api.ReplicationControllerStatus) string {
	if spec.Err != nil || spec.Controller == nil {
		return ""
	}
	hash := api.TemplateHash(&spec.Controller.DesiredState.TaskTemplate)
	if st == nil {
		return hash
	}
	if r := st.Rollout; r.RollingBack(hash) && !r.RollbackFailed && r.CompletedHash != "" {
		return r.CompletedHash
	}
	return hash
}

// historyItem is one revision of rollout history -o json.
type historyItem struct {
	api.Revision
	Current bool `json:"current"`
}

// printHistoryDocument prints {"items": [...]} in the document format.
func (c *cli) printHistoryDocument(revs []api.Revision, hash string, out output) error {
	current := currentRevision(revs, hash)
	items := make([]historyItem, len(revs))
	for i, r := range revs {
		items[i] = historyItem{Revision: r, Current: i == current}
	}
	data, err := ctlview.EncodeJSON(struct {
		Items []historyItem `json:"items"`
	}{items})
	if err != nil {
		return err
	}
	return out.writeDocument(c.stdout, data)
}

// readHistory reads the spec of id and its recorded revisions.
func readHistory(ctx context.Context, cn *conn, id string) (registry.Spec, []api.Revision, error) {
	spec, err := cn.getController(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return spec, nil, fmt.Errorf("controller %q not found", id)
	}
	if err != nil {
		return spec, nil, err
	}
	revs, err := listRevisions(ctx, cn, id)
	return spec, revs, err
}

func listRevisions(ctx context.Context, cn *conn, id string) ([]api.Revision, error) {
	return call(ctx, cn, func(ctx context.Context) ([]api.Revision, error) {
		return cn.store.ListRevisions(ctx, id)
	})
}

// currentRevision is the index in revs (oldest first) of the revision
// that runs the template with hash, the newest such (an undo records the
// template it brings back again, under its new revision), or -1.
func currentRevision(revs []api.Revision, hash string) int {
	for i := len(revs) - 1; i >= 0; i-- {
		if hash != "" && revs[i].TemplateHash == hash {
			return i
		}
	}
	return -1
}

// printRevisions prints revs as a table, each line after indent, with a *
// in CURRENT on the current one (currentRevision); wide adds the etcd
// revision of the spec that brought each, and its template hash.
func printRevisions(w io.Writer, indent string, revs []api.Revision, hash string, wide bool) {
	current := currentRevision(revs, hash)
	var b strings.Builder
	tw := newTable(&b)
	head := []string{indent + "REVISION", "FIRST-SEEN", "IMAGE"}
	if wide {
		head = append(head, "ETCD-REVISION", "TEMPLATE-HASH")
	}
	row(tw, append(head, "CURRENT")...)
	for i, r := range revs {
		mark := ""
		if i == current {
			mark = "*"
		}
		cells := []string{indent + strconv.FormatInt(r.Number, 10), formatFirstSeen(r.FirstSeen), ctlview.OrNone(r.Image())}
		if wide {
			cells = append(cells, strconv.FormatInt(r.Revision, 10), ctlview.OrNone(r.TemplateHash))
		}
		row(tw, append(cells, mark)...)
	}
	_ = tw.Flush()
	// the empty CURRENT cells would end their lines in spaces
	for line := range strings.Lines(b.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

func formatFirstSeen(t time.Time) string {
	if t.IsZero() {
		return ctlview.Unknown
	}
	return t.UTC().Format(time.RFC3339)
}
