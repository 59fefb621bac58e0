package agent

// This file tells a controller when the node cuts its containers' stops
// short: under --stop-when-isolated the node's task control caps every
// grace period (Options.MaxStopGrace), and a container that asks for more
// gets less. The first such container of each template is an event.

import (
	"fmt"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// ReasonStopGraceCapped is the reason of the event that says a container's
// grace period was capped.
const ReasonStopGraceCapped = "StopGraceCapped"

// tellGraceCapped records the event for the container spec of controller
// id, once per template, when its grace period is over the cap.
func (rm *Agent) tellGraceCapped(id string, spec api.TaskSpec) {
	limit := rm.opts.MaxStopGrace
	g := spec.Container.StopGracePeriodSeconds
	if limit <= 0 || g == nil || time.Duration(*g)*time.Second <= limit {
		return
	}
	key := id + "/" + spec.Labels[api.LabelTemplateHash] + "/" + spec.Labels[api.LabelContainer]
	if _, told := rm.graceCapped.LoadOrStore(key, true); told {
		return
	}
	rm.events.record(id, api.EventWarning, ReasonStopGraceCapped, fmt.Sprintf(
		"node %s caps the grace period of %s at %s, not the %ds it asks for: with --stop-when-isolated it removes its containers within half its lease",
		rm.opts.Node.Name, spec.Name, limit, *g))
}
