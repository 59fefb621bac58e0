package main

// This file is the status page's nodes view, /nodes, as `rcctl nodes`
// shows the nodes: every Docker engine a manager acts for, registered
// (Ready) or gone while it still holds assignments (NotReady), with its
// capacity, what its slots reserve of it (known to the leader only), its
// slots and containers, and its lease.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

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
}

// nodeHeader is the nodes view's header.
var nodeHeader = []string{"NAME", "STATUS", "LABELS", "CPUS", "MEMORY", "RESERVED CPU", "RESERVED MEMORY", "ASSIGNED", "CONTAINERS", "LEASE", "AGE"}

// notLeader is shown for what only the leader knows.
const notLeader = "<leader only>"

func newNodesPage(m ctlview.Manager, d nodeData) nodesPage {
	page := nodesPage{head: newHead("nodes", m), Nodes: table{Header: nodeHeader, Empty: "No nodes found."}}
	registered := map[string]*api.Node{}
	names := map[string]bool{}
	for i := range d.registered {
		registered[d.registered[i].Name] = &d.registered[i]
		names[d.registered[i].Name] = true
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
		status, class := "NotReady", "not-ready"
		if n != nil {
			status, class = "Ready", ""
			ready++
		}
		labels, cpus, memory, lease, age := ctlview.Unknown, ctlview.Unknown, ctlview.Unknown, ctlview.None, ctlview.Unknown
		if n != nil {
			labels = ctlview.FormatLabels(n.Labels)
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
		if d.stats != nil {
			s := stats[name]
			reservedCPU = strconv.FormatFloat(s.ReservedCPU, 'f', -1, 64)
			reservedMemory = units.BytesSize(float64(s.ReservedMemory))
		}
		page.Nodes.Rows = append(page.Nodes.Rows, tableRow{Key: name, Class: class, Cells: []cell{
			{Text: name}, {Text: status}, {Text: labels}, {Text: cpus}, {Text: memory}, {Text: reservedCPU}, {Text: reservedMemory},
			{Text: strconv.Itoa(d.assigned[name])}, {Text: strconv.Itoa(d.containers[name])}, {Text: lease, Class: "age"}, {Text: age, Class: "age"},
		}})
	}
	total := len(page.Nodes.Rows)
	page.Summary = fmt.Sprintf("%d nodes, %d ready", total, ready)
	if total == 1 {
		page.Summary = fmt.Sprintf("1 node, %d ready", ready)
	}
	if d.stats == nil {
		page.Summary += "; reservations are shown by the leader's page"
	}
	return page
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
