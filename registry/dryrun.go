package registry

// This file is the dry run of `rcctl apply --dry-run` and `rcctl scale
// --dry-run`: what the manager would do to a controller's containers,
// container by container, computed by the manager's own plan. It runs the
// plan again and again on a simulated host where every action succeeds
// and every new container is available at once, until the plan has
// nothing left to do, and sums up what happened. It writes nothing.

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// DryRunStep is one container the manager would change.
type DryRunStep struct {
	// Action is "create", "remove" or "replace".
	Action string
	// Container is the container's name (for a replace, its slot's name).
	Container string
	// Detail says why, for people.
	Detail string
}

// dryRunRounds bounds the simulation; a plan converges in far fewer.
const dryRunRounds = 10_000

// DryRun returns what the manager of registry registryID would do to make
// the containers tasks (the controller's, as Docker lists them) match rc,
// in the order it would do it. rc must be valid.
func DryRun(rc *api.ReplicationController, tasks []api.Task, registryID string, opts Options, now time.Time) []DryRunStep {
	opts = opts.withDefaults()
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	sim := slices.Clone(tasks)
	var state controllerState
	var steps []DryRunStep
	replaced := make(map[string]bool) // slot names whose container goes, to come back
	seq := 0
	for range dryRunRounds {
		in := planInput{
			id: rc.ID, spec: rc, hash: hash, revision: 1, createRevision: 1, tasks: sim,
			state: state, now: now, registryID: registryID, burst: opts.BurstReplicas,
		}
		d := plan(in)
		if len(d.creates)+len(d.deletes)+len(d.renames) == 0 {
			break
		}
		state = d.state
		for _, r := range d.renames {
			if holdsSlot(rc.ID, r.task) && r.task.Active() {
				replaced[r.task.Name] = true
				steps = append(steps, DryRunStep{"replace", r.task.Name,
					fmt.Sprintf("template %s → %s, the new one started first", r.task.Labels[api.LabelTemplateHash], hash)})
			}
			sim = renameTask(sim, r.task.ID, r.name)
		}
		for _, t := range d.deletes {
			switch {
			case holdsSlot(rc.ID, t) && t.Active() && t.Labels[api.LabelTemplateHash] != hash && slotOf(t) <= rc.DesiredState.Replicas:
				replaced[t.Name] = true
				steps = append(steps, DryRunStep{"replace", t.Name,
					fmt.Sprintf("template %s → %s, stopped first", t.Labels[api.LabelTemplateHash], hash)})
			case !holdsSlot(rc.ID, t) && t.Active():
				// the outdated one a successor replaced: counted with it
			default:
				steps = append(steps, DryRunStep{"remove", t.Name, removeReason(t, rc)})
			}
		}
		sim = withoutTasks(sim, d.deletes)
		for _, spec := range d.creates {
			seq++
			if !replaced[spec.Name] {
				steps = append(steps, DryRunStep{"create", spec.Name, "template " + hash})
			}
			sim = append(sim, api.Task{
				ID: "dry-run-" + strconv.Itoa(seq), Name: spec.Name, Labels: spec.Labels, State: api.StateRunning,
				Created: now.Add(-time.Hour), StartedAt: now.Add(-time.Hour),
			})
		}
		state.proven = hash
	}
	return steps
}

func removeReason(t api.Task, rc *api.ReplicationController) string {
	switch {
	case !t.Active():
		return "not running: " + t.State
	case slotOf(t) > rc.DesiredState.Replicas:
		return fmt.Sprintf("scale to %d", rc.DesiredState.Replicas)
	}
	return "not needed"
}

func renameTask(tasks []api.Task, id, name string) []api.Task {
	out := slices.Clone(tasks)
	for i := range out {
		if out[i].ID == id {
			out[i].Name = name
		}
	}
	return out
}
