package main

// Printing helpers shared by get and describe: tables, labels, ages, ports
// and commands as a human reads them. Nothing here prints an environment
// value: the spec's env values may be secrets.

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/replication-manager/replication-manager/api"
)

const (
	none    = "<none>"
	unknown = "<unknown>"
	invalid = "<invalid>"
)

// newTable returns a tabwriter with kubectl's spacing; flush it when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
}

// row writes one tab-separated table line.
func row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// formatLabels prints a label map as sorted k=v pairs, or <none>.
func formatLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return none
	}
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	return strings.Join(pairs, ",")
}

// age prints how long ago t was, as kubectl's AGE column does (45s, 3m10s,
// 2h, 4d), or <unknown> for a zero time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return unknown
	}
	return duration.HumanDuration(now.Sub(t))
}

// orNone prints s, or <none> when it is empty.
func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// images lists the images of a controller's containers.
func images(rc *api.ReplicationController) string {
	var out []string
	for _, c := range rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers {
		out = append(out, c.Image)
	}
	return orNone(strings.Join(out, ","))
}

// formatPort prints a port as Docker does: [hostIP:]hostPort->containerPort/proto,
// or containerPort/proto when it is not published, followed by its name.
func formatPort(p api.Port) string {
	proto := strings.ToUpper(p.Protocol)
	if proto == "" {
		proto = "TCP"
	}
	s := fmt.Sprintf("%d/%s", p.ContainerPort, proto)
	if p.HostPort != 0 {
		host := strconv.Itoa(p.HostPort)
		if p.HostIP != "" {
			host = p.HostIP + ":" + host
		}
		s = host + "->" + s
	}
	if p.Name != "" {
		s += " (" + p.Name + ")"
	}
	return s
}

// formatCommand prints a command as a shell would take it: arguments with
// spaces or quotes are quoted.
func formatCommand(cmd api.Command) string {
	args := make([]string, len(cmd))
	for i, a := range cmd {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		args[i] = a
	}
	return strings.Join(args, " ")
}

// notableConditions lists what the conditions of st report beyond the
// counts: the types of those that are True, except Progressing, which the
// manager reports for every controller: it shows as Progressing only while
// a rollout runs, and as its reason (ProgressDeadlineExceeded) when False.
func notableConditions(st *api.ReplicationControllerStatus) string {
	if st == nil {
		return none
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
	return orNone(strings.Join(out, ","))
}

// formatHealthCheck prints a health check as Docker would run it, with the
// settings that are not left to the image or Docker's defaults.
func formatHealthCheck(h *api.HealthCheck) string {
	if h.Disabled() {
		return "disabled (NONE)"
	}
	s := orNone(formatCommand(h.ExplicitTest()))
	var settings []string
	if h.Interval > 0 {
		settings = append(settings, "interval "+h.Interval.String())
	}
	if h.Timeout > 0 {
		settings = append(settings, "timeout "+h.Timeout.String())
	}
	if h.Retries > 0 {
		settings = append(settings, fmt.Sprintf("retries %d", h.Retries))
	}
	if h.StartPeriod > 0 {
		settings = append(settings, "start period "+h.StartPeriod.String())
	}
	if len(settings) > 0 {
		s += " (" + strings.Join(settings, ", ") + ")"
	}
	return s
}
