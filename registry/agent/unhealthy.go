package agent

// This file tells of a task replaced because it is unhealthy: the leader
// ordered it (registry/decide/health.go), the plan replaces it like any
// other task (registry/nodemodel), and this says why, with the health check's
// last output, read from the engine just before the task goes.

import (
	"context"
	"fmt"

	"github.com/replication-manager/replication-manager/api"
)

// healthOutputLimit bounds the health check output an event quotes.
const healthOutputLimit = 512

// unhealthyNote is the event of replacing the unhealthy task t (group: of
// several containers): the container that is unhealthy and its last
// health check output. An inspect that fails leaves the output out; it
// never holds the replacement up.
func (rm *Agent) unhealthyNote(ctx context.Context, t api.Task, group bool) note {
	name, output := t.Name, ""
	candidates := []api.Task{t}
	if group {
		candidates = append(candidates, rm.partsOf(t)...)
	}
	for _, c := range candidates {
		got, err := rm.taskControl.InspectTask(ctx, c.ID)
		if err != nil || got.Health != api.HealthUnhealthy {
			continue
		}
		name, output = c.Name, got.HealthOutput
		break
	}
	if len(output) > healthOutputLimit {
		output = output[:healthOutputLimit] + "..."
	}
	return note{typ: api.EventWarning, reason: api.ReasonUnhealthyReplaced,
		message: fmt.Sprintf("replacing %s (%s): unhealthy; last health check output: %q", name, shortID(t.ID), output)}
}
