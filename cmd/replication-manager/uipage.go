package main

// This file builds what the status page's templates show, as plain
// strings: the rows of `rcctl get` and the blocks of `rcctl describe`,
// with rcctl's formats, which are ctlview's (ages as kubectl's, <none>,
// <unknown>, <invalid>, environment values <hidden>). The same structures
// go into the page's JSON under "page" (uidoc.go), and ui/status.js only
// places their strings: it formats nothing itself. The browser test
// (e2e/statuspage_test.go) checks that both renderings agree.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// head is the top of every page: which page it is (for the script),
// which manager answers and when, a notice when it is not the leader, and
// how often the script polls.
type head struct {
	Page   string `json:"page"`
	Role   string `json:"role"`
	Source string `json:"source"`
	// AsOf is sent in the X-As-Of header, outside the JSON, so that the
	// JSON's ETag holds while nothing else changes (uidoc.go).
	AsOf   string `json:"-"`
	Notice string `json:"notice"`
	PollMS int64  `json:"-"`
}

func newHead(page string, m ctlview.Manager) head {
	return head{
		Page: page, Role: m.Role, Source: m.Source, AsOf: asOf(m.Time),
		Notice: notice(m), PollMS: pollInterval.Milliseconds(),
	}
}

// notice says what a page shows first: that no manager leads, and when
// this manager is not the leader, what it shows instead.
func notice(m ctlview.Manager) string {
	const leaderless = "No manager leads (none holds the leader election): no slot is placed or moved and no status is written until one does."
	switch role := roleNotice(m.Role); {
	case m.Leaderless && role != "":
		return leaderless + " " + role
	case m.Leaderless:
		return leaderless
	default:
		return role
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
	Summary string    `json:"summary"`
	Rows    []listRow `json:"rows"`
}

// listRow is one controller's line.
type listRow struct {
	ID        string `json:"id"`
	Desired   string `json:"desired"`
	Current   string `json:"current"`
	Ready     string `json:"ready"`
	UpToDate  string `json:"upToDate"`
	Available string `json:"available"`
	// Status is the STATUS of rcctl get, one word (ctlview.Status).
	Status string `json:"status"`
	Image  string `json:"image"`
	Age    string `json:"age"`
	// State is ctlview's state at a glance (Glance); Reasons what makes
	// it so.
	State   string `json:"state"`
	Reasons string `json:"reasons"`
}

func newListPage(m ctlview.Manager, views []registry.ControllerView) listPage {
	page := listPage{head: newHead("list", m), Rows: make([]listRow, len(views))}
	counts := map[string]int{}
	for i, v := range views {
		page.Rows[i] = newListRow(m.Time, v)
		counts[page.Rows[i].State]++
	}
	page.Summary = summary(len(views), counts)
	return page
}

func newListRow(now time.Time, v registry.ControllerView) listRow {
	r := listRow{ID: v.ID, Desired: ctlview.Invalid, Image: ctlview.Invalid, Current: ctlview.None, Ready: ctlview.None, UpToDate: ctlview.None, Available: ctlview.None, Age: ctlview.Unknown}
	desired := -1
	if rc := v.Spec; v.SpecErr == nil && rc != nil {
		desired = rc.DesiredState.Replicas
		r.Desired = strconv.Itoa(desired)
		r.Image = ctlview.Images(rc)
	}
	if st := v.Status; st != nil {
		r.Current = strconv.Itoa(st.Replicas)
		r.Ready = strconv.Itoa(st.ReadyReplicas)
		r.UpToDate = strconv.Itoa(st.UpdatedReplicas)
		r.Available = strconv.Itoa(st.AvailableReplicas)
		r.Age = ctlview.Age(now, st.CreationTimestamp)
	}
	state, reasons := ctlview.Glance(desired, v.Status, v.SpecErr)
	r.State, r.Reasons = state, strings.Join(reasons, ", ")
	r.Status = ctlview.Status(v.Spec, v.Status, v.SpecErr)
	return r
}

// summary counts the controllers, and those that fail, roll or are
// degraded, by state.
func summary(total int, byState map[string]int) string {
	s := fmt.Sprintf("%d controllers", total)
	if total == 1 {
		s = "1 controller"
	}
	for _, state := range []string{ctlview.StateFailing, ctlview.StateRolling, ctlview.StateDegraded} {
		if n := byState[state]; n > 0 {
			s += fmt.Sprintf(", %d %s", n, state)
		}
	}
	return s
}

// detailPage is /controllers/<id>: one controller as `rcctl describe`
// shows it.
type detailPage struct {
	head
	ID         string  `json:"id"`
	State      string  `json:"state"`
	Reasons    string  `json:"reasons"`
	Spec       []field `json:"spec"`
	Status     []field `json:"status"`
	Conditions table   `json:"conditions"`
	Containers table   `json:"containers"`
	Images     table   `json:"images"`
	Events     table   `json:"events"`
}

// field is one "Label: value" line; Depth indents it under the one above.
// Class "age" marks a value that changes with the clock.
type field struct {
	Label string `json:"label"`
	Value string `json:"value"`
	Class string `json:"class,omitempty"`
	Depth int    `json:"depth"`
}

// table is a block of rows under a header; Empty is shown instead when
// there are no rows.
type table struct {
	Header []string   `json:"header"`
	Rows   []tableRow `json:"rows"`
	Empty  string     `json:"empty"`
}

// tableRow is one row; Key, when set, names it for the filter and for
// the script (data-key).
type tableRow struct {
	Key   string `json:"key,omitempty"`
	Class string `json:"class,omitempty"`
	Cells []cell `json:"cells"`
}

// cell is one cell's text; Class "age" marks one that changes with the
// clock.
type cell struct {
	Text  string `json:"text"`
	Class string `json:"class,omitempty"`
}

func newDetailPage(m ctlview.Manager, c ctlview.Controller) detailPage {
	now := m.Time
	page := detailPage{head: newHead("detail", m), ID: c.ID, State: c.State, Reasons: strings.Join(c.Reasons, ", ")}
	page.Spec = specFields(c)
	page.Status = statusFields(now, c)
	page.Conditions = conditionTable(now, c.Status)
	page.Containers = containerTable(now, m.Source, c.Containers)
	page.Images = imageTable(c.Status)
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
	add(0, "Labels:", ctlview.FormatLabels(c.Labels))
	add(0, "Selector:", ctlview.FormatLabels(ds.ReplicasInSet))
	add(0, "Replicas:", fmt.Sprintf("%d desired", ds.Replicas))
	if ds.MinReadySeconds > 0 {
		add(0, "Min ready:", fmt.Sprintf("%ds", ds.MinReadySeconds))
	}
	for _, s := range ctlview.StrategyFields(*ds) {
		add(0, s[0], s[1])
	}
	add(0, "Template labels:", ctlview.FormatLabels(ds.TaskTemplate.Labels))
	if at := ds.TaskTemplate.RestartedAt; at != "" {
		add(0, "Restarted at:", at)
	}
	containers := ds.TaskTemplate.DesiredState.Manifest.Containers
	for i, ctr := range containers {
		depth := 0
		if len(containers) > 1 {
			add(0, fmt.Sprintf("Container %d:", i+1), ctlview.OrNone(ctr.Name))
			depth = 1
		} else if ctr.Name != "" {
			add(0, "Container:", ctr.Name)
		}
		containerFields(add, depth, ctr)
	}
	for i, ctr := range ds.TaskTemplate.DesiredState.Manifest.InitContainers {
		add(0, fmt.Sprintf("Init container %d:", i+1), ctr.Name)
		containerFields(add, 1, ctr)
	}
	add(0, "Revision:", strconv.FormatInt(c.Revision, 10))
	return f
}

// containerFields adds the lines of one container of the template at
// depth; environment values never show, whatever the view holds.
func containerFields(add func(depth int, label, value string), depth int, ctr api.Container) {
	add(depth, "Image:", ctlview.OrNone(ctr.Image))
	add(depth, "Command:", ctlview.OrNone(ctlview.FormatCommand(ctr.Command)))
	if ctr.WorkingDir != "" {
		add(depth, "Working dir:", ctr.WorkingDir)
	}
	ports := make([]string, len(ctr.Ports))
	for j, p := range ctr.Ports {
		ports[j] = ctlview.FormatPort(p)
	}
	add(depth, "Ports:", ctlview.OrNone(strings.Join(ports, ", ")))
	if len(ctr.Env) == 0 {
		add(depth, "Environment:", ctlview.None)
	} else {
		add(depth, "Environment:", "")
		for _, e := range ctr.Env {
			add(depth+1, e.Name+":", ctlview.Hidden) // never the value, whatever c holds
		}
	}
	add(depth, "Memory:", ctlview.FormatMemory(ctr.Memory))
	add(depth, "CPU shares:", ctlview.FormatCPU(ctr.CPU))
	if ctr.HealthCheck != nil {
		add(depth, "Health check:", ctlview.FormatHealthCheck(ctr.HealthCheck))
	}
	for _, s := range ctlview.SecurityFields(ctr) {
		add(depth, s[0], s[1])
	}
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
		{Label: "Last sync:", Value: ctlview.FormatTime(now, st.LastSyncTime), Class: "age"},
		{Label: "Created:", Value: ctlview.FormatTime(now, st.CreationTimestamp), Class: "age"},
	}
}

func conditionTable(now time.Time, st *api.ReplicationControllerStatus) table {
	t := table{Header: []string{"TYPE", "STATUS", "REASON", "MESSAGE", "AGE"}, Empty: ctlview.None}
	if st == nil {
		return t
	}
	for _, c := range st.Conditions {
		t.Rows = append(t.Rows, tableRow{Class: conditionClass(c), Cells: []cell{
			{Text: c.Type}, {Text: c.Status}, {Text: ctlview.OrNone(c.Reason)}, {Text: ctlview.OrNone(ctlview.OneLineString(c.Message))},
			{Text: ctlview.Age(now, c.LastTransitionTime), Class: "age"},
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
	t := table{Header: []string{"NAME", "NODE", "SLOT", "STATE", "HEALTH", "UP-TO-DATE", "AGE", "IMAGE-ID"}, Empty: ctlview.None}
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
		created := ctlview.Unknown
		if !c.Created.IsZero() {
			created = ctlview.Age(now, c.Created)
		}
		imageID := ctlview.Unknown
		if c.ImageID != "" {
			imageID = api.ShortImageID(c.ImageID)
		}
		t.Rows = append(t.Rows, tableRow{Class: class, Cells: []cell{
			{Text: c.Name}, {Text: c.Node}, {Text: ctlview.OrNone(c.Slot)}, {Text: ctlview.OrNone(c.State)}, {Text: ctlview.OrNone(c.Health)},
			{Text: upToDate}, {Text: created, Class: "age"}, {Text: imageID},
		}})
	}
	return t
}

// imageTable is describe's Images: each image the status says the
// containers run, with its full ID and repo digest.
func imageTable(st *api.ReplicationControllerStatus) table {
	t := table{Header: []string{"IMAGE", "IMAGE-ID", "REPO-DIGEST", "CONTAINERS"}, Empty: ctlview.None}
	if st == nil {
		return t
	}
	for _, im := range st.Images {
		t.Rows = append(t.Rows, tableRow{Cells: []cell{
			{Text: im.Image}, {Text: im.ImageID}, {Text: ctlview.OrNone(im.RepoDigest)}, {Text: strconv.Itoa(im.Containers)},
		}})
	}
	return t
}

func eventTable(now time.Time, events []api.Event) table {
	t := table{Header: []string{"AGE", "TYPE", "REASON", "MESSAGE"}, Empty: ctlview.None}
	for _, ev := range events {
		class := ""
		if ev.Type == api.EventWarning {
			class = "warning"
		}
		t.Rows = append(t.Rows, tableRow{Class: class, Cells: []cell{
			{Text: ctlview.Age(now, ev.Time), Class: "age"}, {Text: ev.Type}, {Text: ev.Reason}, {Text: ctlview.OneLineString(ev.Message)},
		}})
	}
	return t
}

// missingPage is the page of an unknown controller, or of data that
// cannot be read.
type missingPage struct {
	head
	Title   string
	Message string
}
