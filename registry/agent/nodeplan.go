package agent

// This file is the node's part of the plan: it runs exactly the slots the
// leader assigned to it, each with its assigned template, and no more.
// What it does with its assignments is the node model's
// (registry/nodemodel), which the leader's dry run plays too; this file
// turns the model's answer into the decision's renames, deletes, creates
// and events. It never counts, ranks or trims: that is the leader's.
// Pure, as the rest of plan.

import (
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/nodemodel"
)

// planAssigned runs the assigned slots. removing are the controller's
// containers Docker is removing already; d.blocked the slots whose names
// containers outside the set hold.
func planAssigned(in planInput, d *decision, removing []api.Task) {
	window := in.spec.DesiredState.AvailableAfter()
	r := nodemodel.Plan(nodemodel.Input{
		Controller: in.id, Assigned: in.assigned, Hash: in.hash,
		Containers: modelContainers(d.active, window), Removing: modelContainers(removing, window), Blocked: d.blocked,
		Burst: in.burst, Window: window, Now: in.now,
	})
	if r.Unassigned > 0 {
		d.event(api.EventNormal, "Unassigned", "removing %d container(s) of slots no longer assigned to this node", r.Unassigned)
	}
	for _, i := range r.Remove {
		d.deletes = append(d.deletes, d.active[i])
	}
	for _, rep := range r.Replace {
		t := d.active[rep.Container]
		switch {
		case rep.Unhealthy:
			d.deletes = append(d.deletes, t)
			d.unhealthy = append(d.unhealthy, t)
			continue
		case rep.StartFirst:
			d.renames = append(d.renames, rename{task: t, name: outdatedName(in.id, rep.Slot, t.ID)})
		default:
			d.deletes = append(d.deletes, t)
		}
		d.rolloutSteps++
		d.rolled = true
		d.event(api.EventNormal, "RollingUpdate", "replacing %s (template %s) with template %s", t.Name, t.Labels[api.LabelTemplateHash], rep.Hash)
	}
	for _, i := range r.Retire {
		d.deletes = append(d.deletes, d.active[i])
		d.rolled = true
	}
	d.more = d.more || r.More
	d.requeue(r.RecheckAfter)
	planCreates(in, d, r.Create, r.MoreCreates)
}

// modelContainers are tasks as the node model reads them, under the
// monitor window window.
func modelContainers(tasks []api.Task, window time.Duration) []nodemodel.Container {
	out := make([]nodemodel.Container, len(tasks))
	for i, t := range tasks {
		out[i] = nodemodel.Container{Name: t.Name, ID: t.ID, Slot: slotOf(t), Hash: t.Labels[api.LabelTemplateHash],
			Ready: t.Ready(), Since: startedAt(t), Monitored: monitored(t, window)}
	}
	return out
}
