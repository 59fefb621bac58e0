package agent

// Tests of a rolling update as one host runs it: the node's part of a
// step (stop first, start first, OnDelete, the renamed old container) and
// the Progressing condition; the bounds through the whole composition are
// in rolloutbounds_test.go. The leader's steps are table-tested in package
// decide.

import (
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

// outdatedTask is a running, available container of web in slot, of an
// older template.
func outdatedTask(slot int) api.Task {
	return with(ours(slot), func(t *api.Task) {
		t.ID += "-0ld"
		t.Labels[api.LabelTemplateHash] = "0ld0ld0ld0"
	})
}

// fresh is a container of the current template that has just started:
// not available with minReadySeconds above 0.
func fresh(slot int) api.Task {
	return with(ours(slot), func(t *api.Task) { t.StartedAt, t.Created = planNow, planNow })
}

// renamedOut is an outdated container of slot renamed out for its
// successor.
func renamedOut(slot int) api.Task {
	return with(outdatedTask(slot), func(t *api.Task) { t.Name = outdatedName("web", slot, t.ID) })
}

func rolling(replicas int, fn func(*api.ReplicationControllerState)) *api.ReplicationController {
	rc := newController("web", replicas)
	rc.DesiredState.MinReadySeconds = 5
	if fn != nil {
		fn(&rc.DesiredState)
	}
	return rc
}

func TestProgressingCondition(t *testing.T) {
	spec := rolling(2, func(ds *api.ReplicationControllerState) {
		d := 60
		ds.UpdateStrategy = &api.UpdateStrategy{ProgressDeadlineSeconds: &d}
	})
	in := planInput{id: "web", spec: spec, hash: webHash, now: planNow, assigned: assignedSlots(nil, 2, webHash)}

	starting := with(ours(2), func(t *api.Task) { t.Health = api.HealthStarting })
	c, r, next := progressing(in, []api.Task{outdatedTask(1), starting}, rolloutProgress{})
	if c.Reason != api.ReasonRollingUpdate || c.Status != "True" || next != time.Minute {
		t.Errorf("rolling: %+v, next look in %s; want True RollingUpdate and a look at the deadline", c, next)
	}

	in.now = planNow.Add(61 * time.Second) // nothing moved
	c, r, _ = progressing(in, []api.Task{outdatedTask(1), starting}, r)
	if c.Reason != api.ReasonProgressDeadlineExceeded || c.Status != "False" {
		t.Errorf("stalled: %+v, want False ProgressDeadlineExceeded", c)
	}

	in.now = planNow.Add(62 * time.Second) // the successor is available: progress
	c, r, _ = progressing(in, []api.Task{outdatedTask(1), ours(2)}, r)
	if c.Reason != api.ReasonRollingUpdate || c.Status != "True" {
		t.Errorf("moving again: %+v, want True RollingUpdate", c)
	}

	c, r, _ = progressing(in, []api.Task{ours(1), ours(2)}, r)
	if c.Reason != api.ReasonRolloutComplete || !r.done || r.started != planNow {
		t.Errorf("done: %+v, %+v; want RolloutComplete, started at the first look", c, r)
	}
}

// A crash-looping container of the new template without a health check
// is ready for a moment after each start: its coming back is no progress,
// and the rollout stalls past its deadline. Before, each start reset the
// deadline, and a crash loop faster than it never reported a stall (the
// e2e test of a crashing template met it once its health check was off).
func TestACrashLoopIsNoProgress(t *testing.T) {
	spec := rolling(2, func(ds *api.ReplicationControllerState) {
		d := 10
		ds.MinReadySeconds, ds.UpdateStrategy = 0, &api.UpdateStrategy{ProgressDeadlineSeconds: &d}
	})
	in := planInput{id: "web", spec: spec, hash: webHash, now: planNow, assigned: assignedSlots(nil, 2, webHash)}
	_, r, _ := progressing(in, []api.Task{outdatedTask(1), outdatedTask(2)}, rolloutProgress{})
	var c api.Condition
	for i := 1; i <= 4; i++ { // slot 2 stopped, then its successor crashes every 4 s
		in.now = planNow.Add(time.Duration(4*i) * time.Second)
		_, r, _ = progressing(in, []api.Task{outdatedTask(1), fresh(2)}, r)
		in.now = in.now.Add(time.Second)
		c, r, _ = progressing(in, []api.Task{outdatedTask(1)}, r)
	}
	if c.Reason != api.ReasonProgressDeadlineExceeded || c.Status != "False" {
		t.Errorf("after 17 s of a crash loop: %+v, want False ProgressDeadlineExceeded", c)
	}
}

func TestPlanRunsTheAssignedSlots(t *testing.T) {
	web := newController("web", 2)
	hash := webHash
	at := func(slot int, fn func(*api.Assignment)) registry.SlotAssignments {
		a := assignedSlots([]int{slot}, 0, hash)
		sa, _ := a.Get(slot)
		if fn != nil {
			fn(&sa.Assignment)
		}
		return a.With(slot, sa)
	}
	withSlots := func(all ...registry.SlotAssignments) registry.SlotAssignments {
		var out registry.SlotAssignments
		for _, as := range all {
			for k, v := range as.All() {
				out = out.With(k, v)
			}
		}
		return out
	}
	startFirst := func(a *api.Assignment) { a.StartFirst = true }
	onDelete := func(a *api.Assignment) { a.OnDelete = true }
	tests := []struct {
		name                      string
		tasks                     []api.Task
		assigned                  registry.SlotAssignments
		creates, deletes, renames []string
	}{
		{"a slot without a container is created", nil, at(2, nil), []string{"web-2"}, nil, nil},
		{"an outdated container is stopped first", []api.Task{outdatedTask(1)}, at(1, nil), []string{"web-1"}, []string{"web-1"}, nil},
		{"start first renames the old container out and starts the successor", []api.Task{outdatedTask(1)}, at(1, startFirst),
			[]string{"web-1"}, nil, []string{"web-1->" + outdatedName("web", 1, outdatedTask(1).ID)}},
		{"the renamed old container stays while its successor is not available", []api.Task{renamedOut(1), fresh(1)}, at(1, startFirst),
			nil, nil, nil},
		{"the renamed old container goes once its successor is available", []api.Task{renamedOut(1), ours(1)}, at(1, startFirst),
			nil, []string{renamedOut(1).Name}, nil},
		{"OnDelete keeps a running container of another template", []api.Task{outdatedTask(1)}, at(1, onDelete), nil, nil, nil},
		{"a container of a slot no longer assigned goes, with its renamed old one", []api.Task{ours(1), renamedOut(2), ours(2)}, at(1, nil),
			nil, []string{renamedOut(2).Name, "web-2"}, nil},
		{"two slots, one of them new", []api.Task{ours(1)}, withSlots(at(1, nil), at(2, nil)), []string{"web-2"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := planInput{id: "web", spec: web, hash: hash, revision: 30, createRevision: 1, tasks: tt.tasks, now: planNow,
				registryID: testRegistryID, burst: 50, assigned: tt.assigned, state: controllerState{proven: hash},
				templates: map[string]*api.TaskTemplate{hash: &web.DesiredState.TaskTemplate}}
			d := plan(in)
			if got := createNames(d); !slices.Equal(got, tt.creates) {
				t.Errorf("creates = %v, want %v", got, tt.creates)
			}
			want := slices.Clone(tt.deletes)
			slices.Sort(want)
			if got := deleteNames(d); !slices.Equal(got, want) {
				t.Errorf("deletes = %v, want %v", got, want)
			}
			if got := renameNames(d); !slices.Equal(got, tt.renames) {
				t.Errorf("renames = %v, want %v", got, tt.renames)
			}
		})
	}
}

func TestPlanCreatesAnOlderRevisionFromItsTemplate(t *testing.T) {
	web := newController("web", 1)
	old := newController("web", 1)
	old.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = "demo-task:old"
	oldHash := api.TemplateHash(&old.DesiredState.TaskTemplate)
	in := planInput{id: "web", spec: web, hash: webHash, revision: 30, createRevision: 1, now: planNow,
		registryID: testRegistryID, burst: 50, assigned: assignedSlots([]int{1}, 0, oldHash), state: controllerState{proven: oldHash},
		templates: map[string]*api.TaskTemplate{webHash: &web.DesiredState.TaskTemplate, oldHash: &old.DesiredState.TaskTemplate}}
	d := plan(in)
	if len(d.creates) != 1 || d.creates[0].Container.Image != "demo-task:old" || d.creates[0].Labels[api.LabelTemplateHash] != oldHash {
		t.Fatalf("creates %+v, want web-1 of the assigned (older) template", d.creates)
	}
	delete(in.templates, oldHash)
	if d := plan(in); len(d.creates) != 0 || d.failure == nil || d.failure.Reason != api.ReasonCreateFailed {
		t.Errorf("without the template: creates %v, failure %+v; want none, and CreateFailed saying why", createNames(d), d.failure)
	}
}
