package api

import (
	"fmt"
	"maps"
)

// NodeAvailability is whether a node takes slots: Swarm's three
// availabilities.
type NodeAvailability string

// The availabilities a node config may hold.
const (
	// NodeActive: the node takes new slots (the default).
	NodeActive NodeAvailability = "active"
	// NodePause: no slot is newly placed on the node; those there stay
	// (rcctl cordon).
	NodePause NodeAvailability = "pause"
	// NodeDrain: every slot on the node moves elsewhere, paced (rcctl
	// drain).
	NodeDrain NodeAvailability = "drain"
)

// NodeConfig is what a user says of one node under
// /registry/nodeconfig/<node> (docs/CONTRACT.md, Node maintenance). The
// managers only read it, so it outlives any of them.
type NodeConfig struct {
	// Availability is active when empty.
	Availability NodeAvailability `json:"availability,omitempty"`
	// Labels are merged over the node's --node-labels; the key wins on a
	// clash.
	Labels map[string]string `json:"labels,omitempty"`
}

// Effective is the availability, active when none is set.
func (c NodeConfig) Effective() NodeAvailability {
	if c.Availability == "" {
		return NodeActive
	}
	return c.Availability
}

// Validate checks the config, naming each field that is wrong.
func (c NodeConfig) Validate() error {
	v := &validator{}
	switch c.Availability {
	case "", NodeActive, NodePause, NodeDrain:
	default:
		v.add("availability", `must be "active", "pause" or "drain", got %q`, shorten(string(c.Availability)))
	}
	v.labels("labels", c.Labels)
	if len(v.errs) > 0 {
		return &ValidationError{Errors: v.errs}
	}
	return nil
}

// DecodeNodeConfig decodes and validates a node config, JSON or YAML with
// the same field names; a field it does not know, or twice, is an error,
// as in a spec.
func DecodeNodeConfig(data []byte) (NodeConfig, error) {
	var c NodeConfig
	if err := decodeStrict(data, &c); err != nil {
		return NodeConfig{}, fmt.Errorf("node config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return NodeConfig{}, err
	}
	return c, nil
}

// MergeNodeLabels returns the labels placement sees for a node: those of
// its --node-labels, with the config's over them.
func MergeNodeLabels(registered, configured map[string]string) map[string]string {
	if len(configured) == 0 {
		return registered
	}
	out := maps.Clone(registered)
	if out == nil {
		out = make(map[string]string, len(configured))
	}
	maps.Copy(out, configured)
	return out
}
