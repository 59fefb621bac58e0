package main

// This file is the status page's nodes view, /nodes, as `rcctl nodes`
// shows the nodes: every Docker engine a manager acts for, registered
// (Ready, with ",Paused" or ",Draining" as its config says), gone with a
// record the leader keeps (Gone, since when), or
// gone while it still holds assignments (NotReady), with its capacity,
// what its slots reserve of it and what is free (known to the leader
// only), its slots and containers, and its lease; then the containers the
// gone nodes last reported, which may still run there.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/docker/go-units"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// nodesPage is /nodes: a summary line and a row per node.
type nodesPage struct {
	head
	Summary string `json:"summary"`
	Nodes   table  `json:"nodes"`
	// Gone are the containers the gone nodes last reported.
	Gone table `json:"gone"`
}

// nodeHeader is the nodes view's header, and goneHeader its gone
// containers'.
var (
	nodeHeader = []string{"NAME", "STATUS", "LABELS", "CPUS", "MEMORY", "RESERVED CPU", "RESERVED MEMORY", "FREE CPU", "FREE MEMORY", "ASSIGNED", "CONTAINERS", "LEASE", "AGE"}
	goneHeader = []string{"NODE", "GONE", "CONTROLLER", "NAME", "SLOT", "IMAGE", "STATE"}
)

// notLeader is shown for what only the leader knows.
const notLeader = "<leader only>"

func newNodesPage(m ctlview.Manager, d nodeData) nodesPage {
	page := nodesPage{head: newHead("nodes", m), Nodes: table{Header: nodeHeader, Empty: "No nodes found."},
		Gone: table{Header: goneHeader, Empty: "No node is gone."}}
	registered := map[string]*api.Node{}
	names := map[string]bool{}
	for i := range d.registered {
		registered[d.registered[i].Name] = &d.registered[i]
		names[d.registered[i].Name] = true
	}
	gone := map[string]*api.GoneNode{}
	for i := range d.gone {
		if g := &d.gone[i]; registered[g.Name] == nil {
			gone[g.Name] = g
			names[g.Name] = true
		}
	}
	stats := map[string]leader.NodeStat{}
	for _, s := range d.stats {
		stats[s.Name] = s
		names[s.Name] = true
	}
	for name, n := range d.assigned {
		names[name] = names[name] || n > 0
	}
	for name, n := range d.containers {
		names[name] = names[name] || n > 0
	}
	ready := 0
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if !names[name] || name == "" {
			continue
		}
		n := registered[name]
		status := cell{Text: "NotReady"}
		class := "not-ready"
		switch g := gone[name]; {
		case n != nil:
			status.Text, class = "Ready", ""
			ready++
		case g != nil:
			status = cell{Text: api.NodeGone + " " + ctlview.Age(m.Time, g.GoneSince), Class: "age"}
		}
		cfg := d.configs[name]
		switch cfg.Effective() {
		case api.NodePause:
			status.Text += ",Paused"
		case api.NodeDrain:
			status.Text += ",Draining"
		}
		labels, cpus, memory, lease, age := ctlview.Unknown, ctlview.Unknown, ctlview.Unknown, ctlview.None, ctlview.Unknown
		if n != nil {
			labels = labelsWithSource(n.Labels, cfg.Labels)
			if n.Capacity.CPUs > 0 {
				cpus = strconv.Itoa(n.Capacity.CPUs)
			}
			if n.Capacity.Memory > 0 {
				memory = units.BytesSize(float64(n.Capacity.Memory))
			}
			// what the host keeps for itself (--node-reserve)
			if r := n.Reserved.CPUs; r > 0 {
				cpus += " (" + strconv.FormatFloat(r, 'f', -1, 64) + " kept by the host)"
			}
			if r := n.Reserved.Memory; r > 0 {
				memory += " (" + units.BytesSize(float64(r)) + " kept by the host)"
			}
			lease = leaseText(n.Lease, d.ttl, name)
			age = ctlview.Age(m.Time, n.RegisteredAt)
		}
		reservedCPU, reservedMemory := notLeader, notLeader
		freeCPU, freeMemory := notLeader, notLeader
		if d.stats != nil {
			s := stats[name]
			reservedCPU = strconv.FormatFloat(s.ReservedCPU, 'f', -1, 64)
			reservedMemory = units.BytesSize(float64(s.ReservedMemory))
			freeCPU, freeMemory = freeCells(n, s)
		}
		page.Nodes.Rows = append(page.Nodes.Rows, tableRow{Key: name, Class: class, Cells: []cell{
			{Text: name}, status, {Text: labels}, {Text: cpus}, {Text: memory}, {Text: reservedCPU}, {Text: reservedMemory},
			{Text: freeCPU}, {Text: freeMemory},
			{Text: strconv.Itoa(d.assigned[name])}, {Text: strconv.Itoa(d.containers[name])}, {Text: lease, Class: "age"}, {Text: age, Class: "age"},
		}})
	}
	page.Gone.Rows = goneRows(m, d.gone, gone)
	total := len(page.Nodes.Rows)
	page.Summary = fmt.Sprintf("%d nodes, %d ready", total, ready)
	if total == 1 {
		page.Summary = fmt.Sprintf("1 node, %d ready", ready)
	}
	if len(gone) > 0 {
		page.Summary += fmt.Sprintf(", %d gone", len(gone))
	}
	if d.stats == nil {
		page.Summary += "; reservations are shown by the leader's page"
	}
	return page
}

// labelsWithSource is the LABELS cell: the labels placement sees, those
// of the node's config (which win over --node-labels) marked "(key)", as
// rcctl nodes shows them.
func labelsWithSource(registered, configured map[string]string) string {
	if len(configured) == 0 {
		return ctlview.FormatLabels(registered)
	}
	merged := api.MergeNodeLabels(registered, configured)
	pairs := make([]string, 0, len(merged))
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		p := k + "=" + merged[k]
		if _, ok := configured[k]; ok {
			p += "(key)"
		}
		pairs = append(pairs, p)
	}
	return strings.Join(pairs, ",")
}

// leaseText is the LEASE cell: the lease id in hex, and the seconds it has
// left when etcd told them (the cell is marked "age": it changes with the
// clock).
func leaseText(lease string, ttl map[string]int64, name string) string {
	if lease == "" {
		return ctlview.None
	}
	left, ok := ttl[name]
	switch {
	case !ok:
		return lease
	case left < 0:
		return lease + " (expired)"
	}
	return fmt.Sprintf("%s (%ds left)", lease, left)
}

// freeCells are the FREE CPU and FREE MEMORY cells of node n: what
// placement may still hand out there, its capacity less what its host
// keeps (--node-reserve) and what its assigned slots reserve; <unknown>
// where n did not register the capacity (or is not registered).
func freeCells(n *api.Node, s leader.NodeStat) (cpu, memory string) {
	cpu, memory = ctlview.Unknown, ctlview.Unknown
	if n == nil {
		return cpu, memory
	}
	if n.Capacity.CPUs > 0 {
		free := float64(n.Capacity.CPUs) - n.Reserved.CPUs - s.ReservedCPU
		cpu = strconv.FormatFloat(free, 'f', -1, 64)
	}
	if n.Capacity.Memory > 0 {
		free := n.Capacity.Memory - n.Reserved.Memory - s.ReservedMemory
		memory = units.BytesSize(float64(free))
		if free < 0 {
			memory = "-" + units.BytesSize(float64(-free))
		}
	}
	return cpu, memory
}

// goneRows lists the containers each gone node (of shown, by name) last
// reported, in the order of the records.
func goneRows(m ctlview.Manager, records []api.GoneNode, shown map[string]*api.GoneNode) []tableRow {
	var rows []tableRow
	for _, g := range records {
		if shown[g.Name] == nil {
			continue
		}
		since := ctlview.Age(m.Time, g.GoneSince) + " ago"
		if len(g.Containers) == 0 {
			rows = append(rows, tableRow{Key: g.Name, Cells: []cell{{Text: g.Name}, {Text: since, Class: "age"},
				{Text: ctlview.None}, {Text: ctlview.None}, {Text: ctlview.None}, {Text: ctlview.None}, {Text: ctlview.None}}})
		}
		for _, c := range g.Containers {
			slot := ctlview.None
			if c.Slot > 0 {
				slot = strconv.Itoa(c.Slot)
			}
			rows = append(rows, tableRow{Key: g.Name, Cells: []cell{{Text: g.Name}, {Text: since, Class: "age"},
				{Text: c.Controller}, {Text: c.Name}, {Text: slot}, {Text: c.Image}, {Text: ctlview.OrNone(c.State)}}})
		}
	}
	return rows
}
