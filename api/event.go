package api

import "time"

// Event types.
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)

// Event is one thing the manager did, or failed to do, for a controller. It
// is kept in etcd for about an hour and shown by rcctl describe.
type Event struct {
	Controller string    `json:"controller"`
	Type       string    `json:"type"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message"`
	Time       time.Time `json:"time"`
}
