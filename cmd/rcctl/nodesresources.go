package main

// This file is the memory and CPU columns of nodes (docs/CONTRACT.md,
// Nodes): what each node registered (its capacity), what is reserved
// there, by its host (--node-reserve, in the registration) and by the
// slots assigned to it (the sum over those slots of their task's memory
// and CPU, from the specs and /registry/assignments, as the leader counts
// them), and what is left free for placement.

import (
	"strconv"
	"strings"

	"github.com/docker/go-units"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
	"github.com/replication-manager/replication-manager/registry"
)

// slotReservations sums, per node, what the tasks of the slots assigned
// to it ask for. A slot of a controller whose spec is gone or does not
// decode reserves nothing, as the leader counts it.
func slotReservations(specs []registry.Spec, assignments map[string]map[int]api.Assignment) map[string]api.Resources {
	perTask := make(map[string]api.Resources, len(specs))
	for _, s := range specs {
		if s.Err == nil && s.Controller != nil {
			perTask[s.ID] = s.Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Resources()
		}
	}
	out := map[string]api.Resources{}
	for id, slots := range assignments {
		task, ok := perTask[id]
		if !ok {
			continue
		}
		for _, a := range slots {
			r := out[a.Node]
			r.Memory += task.Memory
			r.CPU += task.CPU
			out[a.Node] = r
		}
	}
	return out
}

// nodeResources is memory in bytes and CPU in cores, as nodes -o json
// prints them.
type nodeResources struct {
	CPU    float64 `json:"cpu"`
	Memory int64   `json:"memory"`
}

// nodeItemResources is status.resources of nodes -o json. A node that is
// not registered has only what its slots reserve; free is there only for
// a node that registered both its CPUs and its memory.
type nodeItemResources struct {
	Capacity        *nodeResources `json:"capacity,omitempty"`
	ReservedByHost  *nodeResources `json:"reservedByHost,omitempty"`
	ReservedBySlots nodeResources  `json:"reservedBySlots"`
	Free            *nodeResources `json:"free,omitempty"`
}

// resources returns v's status.resources.
func (v *nodeView) resources() nodeItemResources {
	out := nodeItemResources{ReservedBySlots: nodeResources{CPU: sharesToCores(v.slots.CPU), Memory: v.slots.Memory}}
	n := v.node
	if n == nil {
		return out
	}
	out.Capacity = &nodeResources{CPU: float64(n.Capacity.CPUs), Memory: n.Capacity.Memory}
	out.ReservedByHost = &nodeResources{CPU: n.Reserved.CPUs, Memory: n.Reserved.Memory}
	if n.Capacity.CPUs > 0 && n.Capacity.Memory > 0 {
		out.Free = &nodeResources{CPU: sharesToCores(v.freeCPU()), Memory: v.freeMemory()}
	}
	return out
}

// freeMemory is what placement may still hand out of v's memory: its
// capacity less both reserves. It is negative when the reserves are
// more than the capacity (a reserve given after the slots were placed).
func (v *nodeView) freeMemory() int64 {
	return v.node.Capacity.Memory - v.node.Reserved.Memory - v.slots.Memory
}

// freeCPU is freeMemory for CPU, in shares as placement counts them.
func (v *nodeView) freeCPU() int64 {
	return int64(v.node.Capacity.CPUs)*1024 - v.node.Reserved.CPUShares() - v.slots.CPU
}

// resourceCells are the FREE-CPU and FREE-MEMORY cells, then CPUS,
// MEMORY, HOST-CPU, HOST-MEMORY, SLOTS-CPU and SLOTS-MEMORY: <unknown>
// where the node did not register the capacity.
func (v *nodeView) resourceCells() (free, wide []string) {
	slotsCPU, slotsMemory := formatCores(sharesToCores(v.slots.CPU)), formatBytes(v.slots.Memory)
	n := v.node
	if n == nil {
		u := ctlview.Unknown
		return []string{u, u}, []string{u, u, u, u, slotsCPU, slotsMemory}
	}
	freeCPU, freeMemory, cpus, memory := ctlview.Unknown, ctlview.Unknown, ctlview.Unknown, ctlview.Unknown
	if n.Capacity.CPUs > 0 {
		cpus, freeCPU = strconv.Itoa(n.Capacity.CPUs), formatCores(sharesToCores(v.freeCPU()))
	}
	if n.Capacity.Memory > 0 {
		memory, freeMemory = formatBytes(n.Capacity.Memory), formatBytes(v.freeMemory())
	}
	return []string{freeCPU, freeMemory},
		[]string{cpus, memory, formatCores(n.Reserved.CPUs), formatBytes(n.Reserved.Memory), slotsCPU, slotsMemory}
}

// sharesToCores turns Docker CPU shares into cores.
func sharesToCores(shares int64) float64 { return float64(shares) / 1024 }

// formatCores prints cores to the hundredth, without trailing zeros:
// 4, 1.5, 0.25.
func formatCores(cores float64) string {
	s := strconv.FormatFloat(cores, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// formatBytes prints bytes in binary units as docker does (512MiB,
// 7.5GiB), with a minus sign when negative.
func formatBytes(b int64) string {
	if b < 0 {
		return "-" + units.BytesSize(-float64(b))
	}
	return units.BytesSize(float64(b))
}
