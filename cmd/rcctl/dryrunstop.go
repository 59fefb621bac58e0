package main

// This file is the part of --dry-run that says how the containers it
// would remove or replace are stopped (docs/CONTRACT.md, Containers,
// Stopping): as their create recorded it, which is what the template they
// were made from says. The dry run shows the stored template's stop, the
// one the running containers were mostly made from, when it sets one.

import (
	"fmt"
	"strings"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// dryRunStops returns the lines that say how the containers of stored
// would be stopped, when plan stops any and stored's template sets a stop
// field; none otherwise (the default stop: SIGTERM and the node's
// --docker-stop-timeout).
func dryRunStops(plan leader.DryRunPlan, stored *api.ReplicationController) []string {
	if stored == nil || !stopsAny(plan) {
		return nil
	}
	containers := stored.DesiredState.TaskTemplate.DesiredState.Manifest.Containers
	if !setsAStop(containers) {
		return nil
	}
	var lines []string
	for i, c := range containers {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("containers[%d]", i)
		}
		lines = append(lines, fmt.Sprintf("stop of %s: %s", name, describeStop(c)))
	}
	return lines
}

// stopsAny reports whether the plan removes, replaces or moves a
// container.
func stopsAny(plan leader.DryRunPlan) bool {
	for _, s := range plan.Steps {
		if s.Action != "create" {
			return true
		}
	}
	return false
}

// setsAStop reports whether any of containers sets a stop field.
func setsAStop(containers []api.Container) bool {
	for _, c := range containers {
		if c.StopSignal != "" || c.StopGracePeriodSeconds != nil || c.PreStop != nil {
			return true
		}
	}
	return false
}

// describeStop says what a container's stop is: "preStop sleep 2s, then
// SIGINT, 7s grace in all".
func describeStop(c api.Container) string {
	signal := c.StopSignal
	if signal == "" {
		signal = api.DefaultStopSignal
	}
	grace := "the node's --docker-stop-timeout"
	if g := c.StopGracePeriodSeconds; g != nil {
		grace = fmt.Sprintf("%ds", *g)
	}
	var b strings.Builder
	if c.PreStop != nil {
		fmt.Fprintf(&b, "preStop %s, then ", c.PreStop)
	}
	fmt.Fprintf(&b, "%s, %s grace in all", signal, grace)
	return b.String()
}
