package main

// This file builds what the status page's templates show, as plain
// strings: the rows of `rcctl get` and the blocks of `rcctl describe`,
// with rcctl's formats (ages as kubectl's, <none>, <unknown>, <invalid>,
// environment values <hidden>). ui/status.js builds the same from the
// JSON when it refreshes a page; the browser test (e2e/statuspage_test.go)
// checks that both agree. Keep the two in step.

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

const (
	none    = "<none>"
	unknown = "<unknown>"
	invalid = "<invalid>"
)

// head is the top of every page: which page it is (for the script),
// which manager answers and when, a notice when it is not the leader, and
// how often the script polls.
type head struct {
	Page   string
	Role   string
	Source string
	AsOf   string
	Notice string
	PollMS int64
}

func newHead(page string, m ctlview.Manager) head {
	return head{
		Page: page, Role: m.Role, Source: m.Source, AsOf: asOf(m.Time),
		Notice: roleNotice(m.Role), PollMS: pollInterval.Milliseconds(),
	}
}

// asOf prints the manager's clock as the page's header shows it.
func asOf(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

// roleNotice says what a page shows when this manager is not the leader.
func roleNotice(role string) string {
	switch role {
	case ctlview.RoleStandby:
		return "This manager is a standby: another one acts. Specs and statuses are read from etcd; containers are shown by the leader's page."
	case ctlview.RoleStarting:
		return "This manager has not listed the controllers yet. Specs and statuses are read from etcd meanwhile; containers are not shown."
	}
	return ""
}

// listPage is / : every controller as `rcctl get` shows it.
type listPage struct {
	head
	Summary string
	Rows    []listRow
}

// listRow is one controller's line.
type listRow struct {
	ID, Desired, Current, Ready, UpToDate, Available, Image, Age string
	// State is ctlview's state at a glance; Reasons the conditions that
	// make it so.
	State, Reasons string
}

func newListPage(m ctlview.Manager, views []registry.ControllerView) listPage {
	page := listPage{head: newHead("list", m), Rows: make([]listRow, len(views))}
	counts := map[string]int{}
	for i, v := range views {
		page.Rows[i] = newListRow(m.Time, v)
		counts[page.Rows[i].State]++
	}
	page.Summary = summary(len(views), counts[ctlview.StateFailing], counts[ctlview.StateRolling])
	return page
}

func newListRow(now time.Time, v registry.ControllerView) listRow {
	r := listRow{ID: v.ID, Desired: invalid, Image: invalid, Current: none, Ready: none, UpToDate: none, Available: none, Age: unknown}
	if rc := v.Spec; v.SpecErr == nil && rc != nil {
		r.Desired = strconv.Itoa(rc.DesiredState.Replicas)
		r.Image = images(rc)
	}
	if st := v.Status; st != nil {
		r.Current = strconv.Itoa(st.Replicas)
		r.Ready = strconv.Itoa(st.ReadyReplicas)
		r.UpToDate = strconv.Itoa(st.UpdatedReplicas)
		r.Available = strconv.Itoa(st.AvailableReplicas)
		r.Age = age(now, st.CreationTimestamp)
	}
	state, reasons := ctlview.Summarize(v.Status, v.SpecErr)
	r.State, r.Reasons = state, strings.Join(reasons, ", ")
	return r
}

// summary counts the controllers, and those that fail or roll.
func summary(total, failing, rolling int) string {
	s := fmt.Sprintf("%d controllers", total)
	if total == 1 {
		s = "1 controller"
	}
	if failing > 0 {
		s += fmt.Sprintf(", %d failing", failing)
	}
	if rolling > 0 {
		s += fmt.Sprintf(", %d rolling", rolling)
	}
	return s
}

// detailPage is /controllers/<id>: one controller as `rcctl describe`
// shows it.
type detailPage struct {
	head
	ID, State, Reasons string
	Spec, Status       []field
	Conditions         table
	Containers         table
	Events             table
}

// field is one "Label: value" line; Depth indents it under the one above.
// Class "age" marks a value that changes with the clock.
type field struct {
	Label, Value, Class string
	Depth               int
}

// table is a block of rows under a header; Empty is shown instead when
// there are no rows.
type table struct {
	Header []string
	Rows   []tableRow
	Empty  string
}

type tableRow struct {
	Class string
	Cells []cell
}

type cell struct{ Text, Class string }

func newDetailPage(m ctlview.Manager, c ctlview.Controller) detailPage {
	now := m.Time
	page := detailPage{head: newHead("detail", m), ID: c.ID, State: c.State, Reasons: strings.Join(c.Reasons, ", ")}
	page.Spec = specFields(c)
	page.Status = statusFields(now, c)
	page.Conditions = conditionTable(now, c.Status)
	page.Containers = containerTable(now, m.Source, c.Containers)
	page.Events = eventTable(now, c.Events)
	return page
}

// specFields are describe's spec lines; environment values are <hidden>
// (they are already, in c).
func specFields(c ctlview.Controller) []field {
	f := []field{{Label: "ID:", Value: c.ID}}
	add := func(depth int, label, value string) {
		f = append(f, field{Label: label, Value: value, Depth: depth})
	}
	ds := c.DesiredState
	if c.SpecError != "" || ds == nil {
		add(0, "Spec:", "<invalid: "+c.SpecError+">")
		add(0, "Revision:", strconv.FormatInt(c.Revision, 10))
		return f
	}
	add(0, "Labels:", formatLabels(c.Labels))
	add(0, "Selector:", formatLabels(ds.ReplicasInSet))
	add(0, "Replicas:", fmt.Sprintf("%d desired", ds.Replicas))
	if ds.MinReadySeconds > 0 {
		add(0, "Min ready:", fmt.Sprintf("%ds", ds.MinReadySeconds))
	}
	strategy := ds.Strategy()
	if strategy.Type == api.RollingUpdate {
		add(0, "Strategy:", fmt.Sprintf("%s (maxUnavailable %s, maxSurge %s)", strategy.Type, strategy.MaxUnavailable, strategy.MaxSurge))
	} else {
		add(0, "Strategy:", strategy.Type)
	}
	if ds.UpdateStrategy != nil && ds.UpdateStrategy.ProgressDeadlineSeconds != nil {
		add(0, "Progress deadline:", fmt.Sprintf("%ds", *ds.UpdateStrategy.ProgressDeadlineSeconds))
	}
	if ds.Paused {
		add(0, "Paused:", "true")
	}
	add(0, "Template labels:", formatLabels(ds.TaskTemplate.Labels))
	if at := ds.TaskTemplate.RestartedAt; at != "" {
		add(0, "Restarted at:", at)
	}
	containers := ds.TaskTemplate.DesiredState.Manifest.Containers
	for i, ctr := range containers {
		depth := 0
		if len(containers) > 1 {
			add(0, fmt.Sprintf("Container %d:", i+1), orNone(ctr.Name))
			depth = 1
		} else if ctr.Name != "" {
			add(0, "Container:", ctr.Name)
		}
		add(depth, "Image:", orNone(ctr.Image))
		add(depth, "Command:", orNone(formatCommand(ctr.Command)))
		if ctr.WorkingDir != "" {
			add(depth, "Working dir:", ctr.WorkingDir)
		}
		ports := make([]string, len(ctr.Ports))
		for j, p := range ctr.Ports {
			ports[j] = formatPort(p)
		}
		add(depth, "Ports:", orNone(strings.Join(ports, ", ")))
		if len(ctr.Env) == 0 {
			add(depth, "Environment:", none)
		} else {
			add(depth, "Environment:", "")
			for _, e := range ctr.Env {
				add(depth+1, e.Name+":", ctlview.Hidden) // never the value, whatever c holds
			}
		}
		add(depth, "Memory:", formatMemory(ctr.Memory))
		add(depth, "CPU shares:", formatCPU(ctr.CPU))
		if ctr.HealthCheck != nil {
			add(depth, "Health check:", formatHealthCheck(ctr.HealthCheck))
		}
		for _, s := range securityFields(ctr) {
			add(depth, s[0], s[1])
		}
	}
	add(0, "Revision:", strconv.FormatInt(c.Revision, 10))
	return f
}

// securityFields are the fields that weaken the container's isolation
// from the host, only those that are set, as label and value.
func securityFields(ctr api.Container) [][2]string {
	var out [][2]string
	for _, f := range []struct {
		label string
		set   bool
	}{
		{"Privileged:", ctr.Privileged},
		{"Host network:", ctr.HostNetwork},
		{"Host PID:", ctr.HostPID},
		{"Host IPC:", ctr.HostIPC},
	} {
		if f.set {
			out = append(out, [2]string{f.label, "true"})
		}
	}
	var volumes, devices []string
	for _, v := range ctr.Volumes {
		mode := "rw"
		if v.ReadOnly {
			mode = "ro"
		}
		volumes = append(volumes, fmt.Sprintf("%s -> %s (%s)", v.HostPath, v.ContainerPath, mode))
	}
	for _, d := range ctr.Devices {
		devices = append(devices, fmt.Sprintf("%s -> %s (%s)", d.HostPath, cmp.Or(d.ContainerPath, d.HostPath), cmp.Or(d.Permissions, "rwm")))
	}
	if len(volumes) > 0 {
		out = append(out, [2]string{"Host mounts:", strings.Join(volumes, ", ")})
	}
	if len(devices) > 0 {
		out = append(out, [2]string{"Devices:", strings.Join(devices, ", ")})
	}
	if len(ctr.CapAdd) > 0 {
		out = append(out, [2]string{"Capabilities added:", strings.Join(ctr.CapAdd, ",")})
	}
	return out
}

// statusFields are describe's status lines.
func statusFields(now time.Time, c ctlview.Controller) []field {
	st := c.Status
	if st == nil {
		return []field{{Label: "Status:", Value: "<none> (the manager has not reported on this controller yet)"}}
	}
	observed := fmt.Sprintf("revision %d", st.ObservedRevision)
	if st.ObservedRevision == c.Revision {
		observed += " (up to date)"
	} else {
		observed += fmt.Sprintf(" (the spec is at revision %d; the manager has not acted on it yet)", c.Revision)
	}
	return []field{
		{Label: "Status:", Value: fmt.Sprintf("%d current / %d ready / %d up to date / %d available",
			st.Replicas, st.ReadyReplicas, st.UpdatedReplicas, st.AvailableReplicas)},
		{Label: "Observed:", Value: observed},
		{Label: "Last sync:", Value: formatTime(now, st.LastSyncTime), Class: "age"},
		{Label: "Created:", Value: formatTime(now, st.CreationTimestamp), Class: "age"},
	}
}

func conditionTable(now time.Time, st *api.ReplicationControllerStatus) table {
	t := table{Header: []string{"TYPE", "STATUS", "REASON", "MESSAGE", "AGE"}, Empty: none}
	if st == nil {
		return t
	}
	for _, c := range st.Conditions {
		t.Rows = append(t.Rows, tableRow{Class: conditionClass(c), Cells: []cell{
			{Text: c.Type}, {Text: c.Status}, {Text: orNone(c.Reason)}, {Text: orNone(oneLineString(c.Message))},
			{Text: age(now, c.LastTransitionTime), Class: "age"},
		}})
	}
	return t
}

// conditionClass marks a condition as ctlview.Summarize counts it.
func conditionClass(c api.Condition) string {
	state, _ := ctlview.Summarize(&api.ReplicationControllerStatus{Conditions: []api.Condition{c}}, nil)
	if state == ctlview.StateOK {
		return ""
	}
	return "state-" + state
}

func containerTable(now time.Time, source string, containers []ctlview.Container) table {
	t := table{Header: []string{"NAME", "NODE", "SLOT", "STATE", "HEALTH", "UP-TO-DATE", "AGE"}, Empty: none}
	if source != ctlview.SourceManager {
		t.Empty = "<unavailable: this manager does not watch Docker; the leader's page shows them>"
		return t
	}
	for _, c := range containers {
		class := ""
		if !(api.Task{State: c.State, Health: c.Health}).Ready() {
			class = "not-ready"
		}
		upToDate := "no"
		if c.UpToDate {
			upToDate = "yes"
		}
		created := unknown
		if !c.Created.IsZero() {
			created = age(now, c.Created)
		}
		t.Rows = append(t.Rows, tableRow{Class: class, Cells: []cell{
			{Text: c.Name}, {Text: c.Node}, {Text: orNone(c.Slot)}, {Text: orNone(c.State)}, {Text: orNone(c.Health)},
			{Text: upToDate}, {Text: created, Class: "age"},
		}})
	}
	return t
}

func eventTable(now time.Time, events []api.Event) table {
	t := table{Header: []string{"AGE", "TYPE", "REASON", "MESSAGE"}, Empty: none}
	for _, ev := range events {
		class := ""
		if ev.Type == api.EventWarning {
			class = "warning"
		}
		t.Rows = append(t.Rows, tableRow{Class: class, Cells: []cell{
			{Text: age(now, ev.Time), Class: "age"}, {Text: ev.Type}, {Text: ev.Reason}, {Text: oneLineString(ev.Message)},
		}})
	}
	return t
}

// missingPage is the page of an unknown controller, or of data that
// cannot be read.
type missingPage struct {
	head
	Title, Message string
}

// The formats below are rcctl's (cmd/rcctl/print.go and describe.go).

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

// age prints how long ago t was, as kubectl's AGE column does.
func age(now, t time.Time) string {
	if t.IsZero() {
		return unknown
	}
	return duration.HumanDuration(now.Sub(t))
}

// formatTime prints a timestamp with how long ago it was.
func formatTime(now, t time.Time) string {
	if t.IsZero() {
		return unknown
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), age(now, t))
}

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
func formatCommand(cmd []string) string {
	args := make([]string, len(cmd))
	for i, a := range cmd {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		args[i] = a
	}
	return strings.Join(args, " ")
}

func formatMemory(bytes int64) string {
	if bytes == 0 {
		return "<no limit>"
	}
	return fmt.Sprintf("%d bytes (%s)", bytes, units.BytesSize(float64(bytes)))
}

func formatCPU(shares int64) string {
	if shares == 0 {
		return "<default>"
	}
	return strconv.FormatInt(shares, 10)
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

// oneLine folds an error for a page: its lines joined with "; ".
func oneLine(err error) string {
	var parts []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// oneLineString folds a multi-line message for a table cell.
func oneLineString(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// slotOrder sorts containers by slot number; a missing or odd slot sorts
// last.
func slotOrder(slot string) int {
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 {
		return math.MaxInt
	}
	return n
}
