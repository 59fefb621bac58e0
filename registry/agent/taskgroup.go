package agent

// This file makes a task of several containers one unit for the plan
// (docs/CONTRACT.md, Tasks). The first container, <id>-<slot>, holds the
// task's network namespace and stands for the whole task: the plan counts,
// rolls and removes it; the others joined its network and are its parts.
// A task whose part has exited or is gone is dead as a whole, so that the
// node replaces it, with the slot's crash-loop backoff when the part
// crashed; a part that someone killed, stopped or removed (docker rm -f
// web-1.prober) did not crash, as the first container would not have. A
// part whose first container is gone is an orphan, removed. Pure, as the
// rest of plan.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// taskCreate is one task to make: its first container, its parts (which
// join the first's network) and its emptyDir volumes.
type taskCreate struct {
	api.TaskSpec
	parts   []api.TaskSpec
	volumes []api.VolumeSpec
	// inits are the init containers, which run to their exit first
	// (initcontainers.go).
	inits []api.TaskSpec
}

// grouping is a controller's containers sorted into tasks.
type grouping struct {
	// firsts are the first containers, each with its task's state: dead
	// when a part is, not ready while a part is not, started when the
	// last part started.
	firsts []api.Task
	// groups are the ids of the firsts of tasks of several containers.
	groups map[string]bool
	// orphans are parts whose first container is gone.
	orphans []api.Task
}

// groupTasks sorts a controller's containers into tasks. templates are
// the manifests the node knows, by template hash: they say which parts a
// task of that template must have. A task of a template it does not know
// must have the parts it has.
func groupTasks(tasks []api.Task, templates map[string]*api.TaskTemplate, now time.Time) grouping {
	if !anyGroup(tasks, templates) {
		return grouping{firsts: tasks} // every task is one container: nothing to sort
	}
	var g grouping
	parts := map[string][]api.Task{}
	for _, t := range tasks {
		if t.JoinedTo != "" {
			parts[t.JoinedTo] = append(parts[t.JoinedTo], t)
		}
	}
	seen := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		if t.JoinedTo != "" {
			continue
		}
		seen[t.ID] = true
		var want []string
		if tmpl := templates[t.Labels[api.LabelTemplateHash]]; tmpl != nil {
			for _, c := range tmpl.DesiredState.Manifest.Containers[1:] {
				want = append(want, c.Name)
			}
		}
		mine := parts[t.ID]
		if len(want) == 0 && len(mine) == 0 {
			g.firsts = append(g.firsts, t)
			continue
		}
		if g.groups == nil {
			g.groups = map[string]bool{}
		}
		g.groups[t.ID] = true
		g.firsts = append(g.firsts, taskState(t, mine, want, now))
	}
	for first, ps := range parts {
		if !seen[first] {
			g.orphans = append(g.orphans, ps...)
		}
	}
	slices.SortFunc(g.orphans, func(a, b api.Task) int { return strings.Compare(a.Name, b.Name) })
	return g
}

// anyGroup reports whether a container joined another's network or a
// template has several containers: only then are there tasks to sort.
func anyGroup(tasks []api.Task, templates map[string]*api.TaskTemplate) bool {
	for _, tmpl := range templates {
		if tmpl != nil && len(tmpl.DesiredState.Manifest.Containers) > 1 {
			return true
		}
	}
	return slices.ContainsFunc(tasks, func(t api.Task) bool { return t.JoinedTo != "" })
}

// taskState is first with the state of its whole task, from its parts:
// want names the parts the task must have (nil: those it has).
func taskState(first api.Task, parts []api.Task, want []string, now time.Time) api.Task {
	if want == nil {
		for _, p := range parts {
			want = append(want, p.Labels[api.LabelContainer])
		}
	}
	if !first.Active() {
		return first // dead or pending on its own
	}
	for _, name := range want {
		i := slices.IndexFunc(parts, func(p api.Task) bool { return p.Labels[api.LabelContainer] == name })
		if i < 0 {
			// removed by someone: the node removes a task's parts only
			// with its first container
			return deadTask(first, 0, now, true)
		}
		p := parts[i]
		switch {
		case p.Active() || pending(p, now):
		default:
			finished := p.FinishedAt
			if finished.IsZero() {
				finished = now
			}
			return deadTask(first, p.ExitCode, finished, p.Killed)
		}
		if p.StartedAt.After(first.StartedAt) {
			first.StartedAt = p.StartedAt
		}
		if p.CheckedAt.Before(first.CheckedAt) {
			first.CheckedAt = p.CheckedAt // the engine vouches for the task as far as for every part
		}
		if first.Ready() && !p.Ready() {
			first.Health = p.Health
			if p.State != api.StateRunning || first.Health == api.HealthNone {
				first.Health = api.HealthStarting
			}
		}
	}
	return first
}

// deadTask is first as a task that died when a part exited with code (or
// went) at finished; killed says someone killed or removed the part, so
// that its death is no crash (crashloop.go).
func deadTask(first api.Task, code int, finished time.Time, killed bool) api.Task {
	first.State = api.StateExited
	first.ExitCode = code
	first.FinishedAt = finished
	first.Killed = killed
	return first
}

// volumeLabels are the labels of a slot's emptyDir volumes: whose they
// are, without the template, so that the task of the next template in
// the slot finds them as its own.
func volumeLabels(in planInput, slot int) map[string]string {
	return map[string]string{
		api.LabelController: in.id,
		api.LabelSlot:       strconv.Itoa(slot),
		api.LabelRegistry:   in.registryID,
	}
}

// newTaskCreate is the create of slot's task from tmpl, with labels.
func newTaskCreate(in planInput, tmpl *api.TaskTemplate, slot int, labels map[string]string) taskCreate {
	m := &tmpl.DesiredState.Manifest
	specs := api.TaskSpecs(in.id, slot, m, labels)
	var volLabels map[string]string // none to label without volumes
	if len(m.Volumes) > 0 {
		volLabels = volumeLabels(in, slot)
	}
	for i := range specs {
		for j := range specs[i].Mounts {
			if specs[i].Mounts[j].Type == api.MountVolume {
				specs[i].Mounts[j].VolumeLabels = volLabels
			}
		}
	}
	inits := api.InitSpecs(in.id, slot, m, labels)
	for i := range inits {
		for j := range inits[i].Mounts {
			if inits[i].Mounts[j].Type == api.MountVolume {
				inits[i].Mounts[j].VolumeLabels = volLabels
			}
		}
	}
	return taskCreate{TaskSpec: specs[0], parts: specs[1:], volumes: api.EmptyDirVolumes(in.id, slot, m, volLabels), inits: inits}
}
