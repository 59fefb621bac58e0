package main

// Printing helpers shared by get and describe: tables, and what the
// conditions report. The formats of labels, ages, ports, commands and the
// like are internal/ctlview's, shared with the daemon's status page.
// Nothing here prints an environment value: the spec's env values may be
// secrets.

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

// newTable returns a tabwriter with kubectl's spacing; flush it when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
}

// row writes one tab-separated table line.
func row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// formatLabels and oneLine are rcctl's names for ctlview's formats of
// labels and of errors.
var (
	formatLabels = ctlview.FormatLabels
	oneLine      = ctlview.OneLine
)

// notableConditions lists what the conditions of st report beyond the
// counts: the types of those that are True, except Progressing, which the
// manager reports for every controller: it shows as Progressing only while
// a rollout runs, and as its reason (ProgressDeadlineExceeded) when False.
func notableConditions(st *api.ReplicationControllerStatus) string {
	if st == nil {
		return ctlview.None
	}
	var out []string
	for _, c := range st.Conditions {
		switch {
		case c.Type == api.ConditionProgressing && c.Status == "False":
			out = append(out, cmp.Or(c.Reason, c.Type+"=False"))
		case c.Type == api.ConditionProgressing && c.Reason == api.ReasonRolloutComplete:
		case c.Status == "True":
			out = append(out, c.Type)
		}
	}
	return ctlview.OrNone(strings.Join(out, ","))
}
