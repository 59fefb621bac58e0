package api

// This file holds the contract's container names of a replica's slot.

import "strconv"

// TaskName is the name of a slot, <id>-<slot>: the name of the first
// container of the task in that slot, which Docker lets only one container
// hold, and the stem of the names of the task's other containers and
// volumes.
func TaskName(id string, slot int) string {
	return id + "-" + strconv.Itoa(slot)
}

// IsTaskName reports whether name is TaskName(id, slot), without
// building it: the leader asks for every reported container of every
// decision.
func IsTaskName(name, id string, slot int) bool {
	return slot > 0 && len(name) > len(id) && name[:len(id)] == id && name[len(id)] == '-' && name[len(id)+1:] == strconv.Itoa(slot)
}
