package api

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Node is a Docker engine as its acting manager registers it under
// /registry/nodes/<name>, under that manager's session lease (docs/CONTRACT.md,
// Nodes): the key disappears when every manager of the engine is gone.
type Node struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Capacity is what the engine reports of its machine.
	Capacity NodeCapacity `json:"capacity"`
	// Reserved is what the host keeps of the capacity for itself
	// (--node-reserve); placement hands out only the rest.
	Reserved NodeReserved `json:"reserved,omitzero"`
	// EngineID is the Docker engine's own id (docker info's ID), which
	// tells two engines that were given the same name apart.
	EngineID string `json:"engineID"`
	// Manager is the identity of the manager acting for the node.
	Manager string `json:"manager,omitempty"`
	// Lease is the etcd lease the key lives under, in hex as etcdctl
	// prints it.
	Lease        string    `json:"lease,omitempty"`
	RegisteredAt time.Time `json:"registeredAt"`
}

// NodeCapacity is a node's machine: CPUs and memory in bytes.
type NodeCapacity struct {
	CPUs   int   `json:"cpus"`
	Memory int64 `json:"memory"`
}

// NodeReport is what a node tells the leader about one controller's
// containers on it, under /registry/reports/<id>/<node>: the status of its
// share of the slots, and each container. The leader merges the reports of
// every node into the controller's one status.
type NodeReport struct {
	Node   string                      `json:"node"`
	Status ReplicationControllerStatus `json:"status"`
	Tasks  []ReportedTask              `json:"tasks,omitempty"`
	// BlockedSlots are the slots whose names containers outside the
	// controller's set hold on this node's engine: the leader puts those
	// slots elsewhere, or uses other slot numbers.
	BlockedSlots []int `json:"blockedSlots,omitempty"`
	// Slots are the slots the node runs for the controller: those assigned
	// to it as it last saw them, and those it still has a container of.
	// A node writes a slot here, in a transaction that checks the slot is
	// still assigned to it, before it creates a container of it, and drops
	// it only once no container of it is left; so the leader never gives
	// a slot to another node while this one may still run it.
	Slots []int `json:"slots,omitempty"`
	// StartedFirst are the slots of which the node may run two containers:
	// an outdated one renamed out of the slot's name and its successor,
	// started first. Like Slots, the node writes a slot here, in a
	// transaction that checks the slot is still assigned to it as it saw
	// it, before it creates the successor, and drops it once its engine
	// lists one container of the slot at most; so any leader, one that
	// remembers no write of its own included, counts both until then.
	StartedFirst []int `json:"startedFirst,omitempty"`
	// Pulling are the slots whose first container waits for its image to
	// be pulled onto the node's engine: not running yet.
	Pulling []PullingSlot `json:"pulling,omitempty"`
}

// PullingSlot is a slot waiting for the pull of its image since Since.
type PullingSlot struct {
	Slot  int       `json:"slot"`
	Image string    `json:"image"`
	Since time.Time `json:"since"`
}

// ReportedTask is one container in a NodeReport, as rcctl describe and the
// status page show it.
type ReportedTask struct {
	Name         string    `json:"name"`
	ID           string    `json:"id"`
	Slot         int       `json:"slot,omitempty"`
	Image        string    `json:"image"`
	State        string    `json:"state"`
	Health       string    `json:"health,omitempty"`
	TemplateHash string    `json:"templateHash,omitempty"`
	Created      time.Time `json:"created"`
	StartedAt    time.Time `json:"startedAt,omitzero"`
	// Monitored: the node's engine said the task runs, since StartedAt,
	// in an answer asked for at least the controller's monitor window
	// (max(minReadySeconds, monitorSeconds)) after it started; with no
	// window, that it runs. The leader counts a task for a rollout's next
	// step only when it is set (docs/CONTRACT.md, Updates).
	Monitored bool `json:"monitored,omitempty"`
	// Parts are the task's other containers, which joined the network of
	// this one, its first (docs/CONTRACT.md, Tasks); none for a task of
	// one container.
	Parts []ReportedPart `json:"parts,omitempty"`

	// ImageID is the image the container runs ("sha256:..."), and
	// RepoDigest the digest a registry knows it by, when the engine
	// knows one (docs/CONTRACT.md, Images).
	ImageID    string `json:"imageID,omitempty"`
	RepoDigest string `json:"repoDigest,omitempty"`
}

// ReportedPart is one container of a task beside its first.
type ReportedPart struct {
	Name      string `json:"name"`
	ID        string `json:"id"`
	Container string `json:"container"`
	Image     string `json:"image"`
	State     string `json:"state"`
	Health    string `json:"health,omitempty"`

	ImageID    string `json:"imageID,omitempty"`
	RepoDigest string `json:"repoDigest,omitempty"`
}

// ReasonUnschedulable is the ReplicaFailure reason of slots that no node
// can take (none matches the nodeSelector, or every match publishes the
// slot's host ports already).
const ReasonUnschedulable = "Unschedulable"

// nodeName is what a node name may be: a key segment (no slash) and a
// label value, like a host name.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ValidateNodeName checks a --node-name.
func ValidateNodeName(name string) error {
	if !nodeName.MatchString(name) {
		return fmt.Errorf("must be 1-63 characters of [A-Za-z0-9_.-] starting with a letter or digit, got %q", shorten(name))
	}
	return nil
}

// ParseNodeLabels parses --node-labels: "k=v,k2=v2", with keys and values
// under the same rules as a controller's labels. An empty string is no
// labels.
func ParseNodeLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return labels, nil
	}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", shorten(pair))
		}
		if _, dup := labels[k]; dup {
			return nil, fmt.Errorf("key %q given twice", shorten(k))
		}
		labels[k] = v
	}
	v := &validator{}
	v.labels("", labels)
	if len(v.errs) > 0 {
		return nil, &ValidationError{Errors: v.errs}
	}
	return labels, nil
}

// FormatLabels prints labels as k=v pairs in key order, as --node-labels
// takes them.
func FormatLabels(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	return strings.Join(pairs, ",")
}

// Engine is what a Docker engine says of itself: the name and id of the
// node it is, and its machine.
type Engine struct {
	Name   string
	ID     string
	CPUs   int
	Memory int64
}
