package api

// This file is a node's reserve (docs/CONTRACT.md, Nodes): the memory and
// CPU its host keeps for itself, which placement does not hand out to
// tasks. The daemon reads it from --node-reserve in the habits of the
// kubelet's --system-reserved (memory=512Mi,cpu=500m), and the node
// registers it beside its capacity.

import (
	"fmt"
	"math"
	"strings"

	"github.com/docker/go-units"
	"k8s.io/apimachinery/pkg/api/resource"
)

// NodeReserved is what a node's host keeps for itself: CPUs in cores (to
// the thousandth, as the kubelet's 500m) and memory in bytes, the units
// of NodeCapacity.
type NodeReserved struct {
	CPUs   float64 `json:"cpus"`
	Memory int64   `json:"memory"`
}

// CPUShares returns the reserved CPU in Docker CPU shares (1024 a CPU),
// the unit placement counts in, rounded up so that the host keeps at
// least what it asked for.
func (r NodeReserved) CPUShares() int64 {
	return int64(math.Ceil(r.CPUs*1024 - 1e-9))
}

// ParseNodeReserve parses --node-reserve: "memory=QUANTITY,cpu=QUANTITY",
// either key or both, as the kubelet's --system-reserved. memory takes a
// Kubernetes quantity of bytes (536870912, 512Mi, 1Gi, 1G) or the same
// with a B after the unit (512MiB, 1GB); cpu takes cores (1, 1.5) or
// millicores (500m). An empty string reserves nothing. Every error names
// the item at fault.
func ParseNodeReserve(s string) (NodeReserved, error) {
	var r NodeReserved
	if strings.TrimSpace(s) == "" {
		return r, nil
	}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return NodeReserved{}, fmt.Errorf("%q: want memory=QUANTITY or cpu=QUANTITY", shorten(item))
		}
		if seen[k] {
			return NodeReserved{}, fmt.Errorf("%q: %s given twice", shorten(item), k)
		}
		seen[k] = true
		var err error
		switch k {
		case "memory":
			r.Memory, err = parseReservedMemory(v)
		case "cpu":
			r.CPUs, err = parseReservedCPU(v)
		default:
			return NodeReserved{}, fmt.Errorf("%q: unknown resource %q, want memory or cpu", shorten(item), shorten(k))
		}
		if err != nil {
			return NodeReserved{}, fmt.Errorf("%q: %w", shorten(item), err)
		}
	}
	return r, nil
}

// parseReservedMemory reads a quantity of bytes; a unit spelled with a
// trailing B (MiB, GB) is the unit without it.
func parseReservedMemory(v string) (int64, error) {
	s := v
	if trimmed, ok := strings.CutSuffix(s, "B"); ok && trimmed != "" && !strings.ContainsAny(trimmed[len(trimmed)-1:], "0123456789") {
		s = trimmed
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("not a quantity of memory (want bytes, or 512Mi, 1Gi, 512MiB, 1G)")
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("must not be negative")
	}
	if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) >= 0 { // ParseQuantity stops there
		return 0, fmt.Errorf("too large")
	}
	bytes := q.Value() // rounded up
	if q.Cmp(*resource.NewQuantity(bytes, resource.BinarySI)) != 0 {
		return 0, fmt.Errorf("not a whole number of bytes (m is a thousandth: did you mean Mi?)")
	}
	return bytes, nil
}

// parseReservedCPU reads a quantity of cores, to the thousandth.
func parseReservedCPU(v string) (float64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, fmt.Errorf("not a quantity of CPU (want cores as 1 or 1.5, or millicores as 500m)")
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("must not be negative")
	}
	if q.Cmp(*resource.NewQuantity(1<<20, resource.DecimalSI)) > 0 {
		return 0, fmt.Errorf("too large")
	}
	return float64(q.MilliValue()) / 1000, nil
}

// CheckReserve says whether the host can keep r of capacity c and leave
// some of it to tasks: nil when it can, or when c does not tell the
// resource (0, which placement does not enforce).
func (r NodeReserved) CheckReserve(c NodeCapacity) error {
	var errs []string
	if c.Memory > 0 && r.Memory >= c.Memory {
		errs = append(errs, fmt.Sprintf("memory %s is not less than the node's %s",
			units.BytesSize(float64(r.Memory)), units.BytesSize(float64(c.Memory))))
	}
	if c.CPUs > 0 && r.CPUShares() >= int64(c.CPUs)*1024 {
		errs = append(errs, fmt.Sprintf("cpu %g is not less than the node's %d CPUs", r.CPUs, c.CPUs))
	}
	if len(errs) > 0 {
		return fmt.Errorf("the reserve leaves no room for tasks: %s", strings.Join(errs, "; "))
	}
	return nil
}
