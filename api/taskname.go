package api

// This file holds the contract's container names of a replica's slot.

import "strconv"

// TaskName is the contract's container name of a replica: <id>-<slot>.
func TaskName(id string, slot int) string {
	return id + "-" + strconv.Itoa(slot)
}

// IsTaskName reports whether name is TaskName(id, slot), without
// building it: the leader asks for every reported container of every
// decision.
func IsTaskName(name, id string, slot int) bool {
	return slot > 0 && len(name) > len(id) && name[:len(id)] == id && name[len(id)] == '-' && name[len(id)+1:] == strconv.Itoa(slot)
}
