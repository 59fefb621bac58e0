package api

// This file is the value of /registry/assignments/<id>/<slot>: which node
// runs a slot, and with which template revision. Only the leader writes
// it; a node runs exactly the assignments that name it.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Assignment is one slot's assignment.
type Assignment struct {
	// Node runs the slot.
	Node string `json:"node"`
	// Revision is the spec ModRevision whose template the slot runs: the
	// current spec's, or one kept in the controller's history. 0 (an
	// assignment written before the field existed) means the current
	// spec's.
	Revision int64 `json:"revision,omitempty"`
	// TemplateHash is that template's hash.
	TemplateHash string `json:"templateHash,omitempty"`
	// OnDelete: the node keeps a running container of another template,
	// and uses this one only when it replaces a container that died or
	// was removed (updateStrategy OnDelete).
	OnDelete bool `json:"onDelete,omitempty"`
	// StartFirst: the node starts the successor before it removes the
	// old container, which it renames out of the slot's name until the
	// successor is available (a surge step).
	StartFirst bool `json:"startFirst,omitempty"`
	// StartedFirst counts the containers that earlier start-first steps
	// of the slot on this node may still run besides the assigned one's:
	// the leader rewrote the slot before the node reported it settled.
	// The leader counts them until the node does; the node ignores it.
	StartedFirst int `json:"startedFirst,omitempty"`
	// Replace is the id of a container of the slot that the node is to
	// replace, with its whole task, because it is unhealthy (healthCheck
	// onUnhealthy: replace). A container of another id is not touched, so
	// the leader leaves it after the replacement.
	Replace string `json:"replace,omitempty"`
}

// DecodeAssignment decodes an assignment's value: JSON, or the bare node
// name that assignments held before they carried a revision.
func DecodeAssignment(value []byte) (Assignment, error) {
	v := strings.TrimSpace(string(value))
	if !strings.HasPrefix(v, "{") {
		if err := ValidateNodeName(v); err != nil {
			return Assignment{}, fmt.Errorf("assignment: node: %w", err)
		}
		return Assignment{Node: v}, nil
	}
	var a Assignment
	if err := json.Unmarshal(value, &a); err != nil {
		return Assignment{}, fmt.Errorf("assignment: %w", err)
	}
	if err := ValidateNodeName(a.Node); err != nil {
		return Assignment{}, fmt.Errorf("assignment: node: %w", err)
	}
	return a, nil
}
