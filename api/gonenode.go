package api

import "time"

// GoneNode is what the leader keeps of a node whose lease is gone, under
// /registry/gonenodes/<node> (docs/CONTRACT.md, Nodes): when it went, and
// the containers its last reports listed. Those may still run there: a
// node cut off from etcd keeps its containers until it sees its
// assignments gone (docs/NODES.md, The partition trade-off), so they are
// shown rather than forgotten with the node's lease. The leader removes
// the record when the node registers again, or once nothing is assigned
// to the node and GoneNodeRetention has passed; rcctl nodes forget
// removes it at once.
type GoneNode struct {
	Name string `json:"name"`
	// GoneSince is when the leader saw the node's registration vanish.
	GoneSince time.Time `json:"goneSince"`
	// Containers are the containers its last reports listed, by
	// controller, then slot, then name.
	Containers []GoneContainer `json:"containers,omitempty"`
	// Omitted counts the containers left out past MaxGoneContainers.
	Omitted int `json:"omitted,omitempty"`
}

// GoneContainer is one container a gone node last reported.
type GoneContainer struct {
	Controller string `json:"controller"`
	Slot       int    `json:"slot,omitempty"`
	Name       string `json:"name"`
	Image      string `json:"image"`
	State      string `json:"state"`
}

// NodeGone is the state of a gone node, as rcctl nodes and the status
// page show it.
const NodeGone = "Gone"

// GoneNodeRetention is how long a gone node stays listed once nothing is
// assigned to it any more.
const GoneNodeRetention = 24 * time.Hour

// MaxGoneContainers bounds the containers one record lists, so that the
// record stays far below etcd's request limit (1.5 MiB by default).
const MaxGoneContainers = 2000
