// Package ctlview is the JSON form of controllers that rcctl and the
// daemon's status page share: the {"items": [...]} document of
// `rcctl get -o json` and of the daemon's /api/v1/controllers, the
// summary of a controller's conditions at a glance, why it waits, and the
// formats both print a controller's fields in (labels, ages, ports,
// commands, health checks and the like).
package ctlview
