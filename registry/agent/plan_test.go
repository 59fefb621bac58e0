package agent

// Table tests of the planner: plan and settle are pure, so every sync
// behaviour is a row of inputs and the actions and status they give, with
// neither etcd nor Docker.

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

var planNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// webHash is the template hash of newController("web", n).
var webHash = api.TemplateHash(&newController("web", 1).DesiredState.TaskTemplate)

// ctr is a container of controller id in slot, made by registry reg ("" for
// one made before the registry label), with the user label name=id.
func ctr(id string, slot int, state, reg string) api.Task {
	labels := map[string]string{"name": id, api.LabelController: id, api.LabelSlot: strconv.Itoa(slot), api.LabelTemplateHash: webHash}
	if reg != "" {
		labels[api.LabelRegistry] = reg
	}
	t := api.Task{
		ID: id + "-id-" + strconv.Itoa(slot) + "-" + state, Name: api.TaskName(id, slot), Labels: labels, State: state,
		Created: planNow.Add(-time.Hour), StartedAt: planNow.Add(-time.Hour),
	}
	if state == api.StateRunning {
		t.CheckedAt = planNow // the node has asked its engine since
	}
	return t
}

// ours is a running container of web in slot, made by this registry.
func ours(slot int) api.Task { return ctr("web", slot, api.StateRunning, testRegistryID) }

// with returns t changed by fn.
func with(t api.Task, fn func(*api.Task)) api.Task {
	t.Labels = cloneLabels(t.Labels)
	fn(&t)
	return t
}

func cloneLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

func createNames(d decision) []string {
	var out []string
	for _, c := range d.creates {
		out = append(out, c.Name)
	}
	return out
}

func deleteNames(d decision) []string {
	var out []string
	for _, t := range d.deletes {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func renameNames(d decision) []string {
	var out []string
	for _, r := range d.renames {
		out = append(out, r.task.Name+"->"+r.name)
	}
	return out
}

func TestPlan(t *testing.T) {
	web := func(replicas int) *api.ReplicationController { return newController("web", replicas) }
	hash := api.TemplateHash(&web(1).DesiredState.TaskTemplate)
	dead := func(slot int, finished time.Duration) api.Task {
		return with(ctr("web", slot, api.StateExited, testRegistryID), func(t *api.Task) {
			t.FinishedAt = planNow.Add(-finished)
		})
	}
	tests := []struct {
		name     string
		spec     *api.ReplicationController // nil: deleted
		invalid  error
		createAt int64 // the spec's CreateRevision; 0 means 1
		tasks    []api.Task
		state    controllerState
		burst    int // 0 means 50
		// assigned are the slots the leader assigned to this node, with the
		// spec's template; nil means 1..replicas
		assigned []int

		creates, deletes, renames []string
		checkImage                bool
		failure                   string // reason of the ReplicaFailure known before apply
		more, gone, stale         bool
		requeued                  bool
		// bare: the assignments are in the format from before they
		// carried a template (a bare node name)
		bare bool
	}{
		{
			name: "a new controller creates the lowest slots and asks about the image first",
			spec: web(3), creates: []string{"web-1", "web-2", "web-3"}, checkImage: true,
		},
		{
			name: "a proven template is not asked about",
			spec: web(2), state: controllerState{proven: hash}, creates: []string{"web-1", "web-2"},
		},
		{
			name: "as many replicas as desired: nothing to do",
			spec: web(2), tasks: []api.Task{ours(1), ours(2)},
		},
		{
			name: "scale-down removes the highest slots",
			spec: web(2), tasks: []api.Task{ours(1), ours(2), ours(3), ours(4), ours(5)},
			deletes: []string{"web-3", "web-4", "web-5"},
		},
		{
			name:     "the node removes the slot the leader took away, whichever it is",
			spec:     web(2),
			tasks:    []api.Task{ours(1), with(ours(2), func(t *api.Task) { t.Health = api.HealthUnhealthy }), ours(3)},
			assigned: []int{1, 3},
			deletes:  []string{"web-2"},
		},
		{
			name:     "the node never trims: it keeps every slot assigned to it",
			spec:     web(1),
			tasks:    []api.Task{ours(1), ours(2)},
			assigned: []int{1, 2},
		},
		{
			name:     "a slot of another template is replaced, stop first",
			spec:     web(1),
			tasks:    []api.Task{with(ours(1), func(t *api.Task) { t.Labels[api.LabelTemplateHash] = "old" })},
			deletes:  []string{"web-1"},
			creates:  []string{"web-1"},
			assigned: []int{1}, checkImage: true,
		},
		{
			name: "the lowest free slots fill holes",
			spec: web(4), tasks: []api.Task{ours(2), ours(4)}, creates: []string{"web-1", "web-3"}, checkImage: true,
		},
		{
			name: "an exited replica is replaced in its slot and kept for inspection under another name",
			spec: web(2), tasks: []api.Task{ours(1), dead(2, time.Minute)},
			renames: []string{"web-2->" + deadName("web", dead(2, 0).ID)}, creates: []string{"web-2"}, checkImage: true,
		},
		{
			name: "only the newest dead replica is kept",
			spec: web(3), tasks: []api.Task{dead(1, 3*time.Minute), dead(2, time.Minute), dead(3, 2*time.Minute)},
			renames: []string{"web-2->" + deadName("web", dead(2, 0).ID)}, deletes: []string{"web-1", "web-3"},
			creates: []string{"web-1", "web-2", "web-3"}, checkImage: true,
		},
		{
			name: "a container created but never started is abandoned after the grace period",
			spec: web(1),
			tasks: []api.Task{with(ours(1), func(t *api.Task) {
				t.State, t.StartedAt, t.Created = api.StateCreated, time.Time{}, planNow.Add(-pendingGrace)
			})},
			deletes: []string{"web-1"}, creates: []string{"web-1"}, checkImage: true,
		},
		{
			name: "a container between its create and its start holds its slot and counts",
			spec: web(1),
			tasks: []api.Task{with(ours(1), func(t *api.Task) {
				t.State, t.StartedAt, t.Created = api.StateCreated, time.Time{}, planNow.Add(-time.Second)
			})},
		},
		{
			name: "a container Docker is removing is not touched but holds its slot's name",
			spec: web(2), tasks: []api.Task{with(ours(1), func(t *api.Task) { t.State = api.StateRemoving })},
			creates: []string{"web-2"}, checkImage: true, requeued: true,
		},
		{
			name: "creates are capped at the burst and the rest left for the next sync",
			spec: web(10), burst: 4, creates: []string{"web-1", "web-2", "web-3", "web-4"}, checkImage: true, more: true,
		},
		{
			name: "creates wait out the create backoff",
			spec: web(3), state: controllerState{createBackoff: backoff{until: planNow.Add(time.Second), failures: 1}},
			requeued: true,
		},
		{
			name: "a crash-looping slot waits out its own backoff, and the others are created at once",
			spec: web(3), state: controllerState{crashes: crashLoops{2: {backoff: backoff{until: planNow.Add(time.Second), failures: 3}}}},
			creates: []string{"web-1", "web-3"}, checkImage: true, requeued: true,
		},
		{
			name: "a crash-looping slot whose backoff is out is created again",
			spec: web(3), state: controllerState{crashes: crashLoops{2: {backoff: backoff{until: planNow.Add(-time.Second), failures: 3}}}},
			creates: []string{"web-1", "web-2", "web-3"}, checkImage: true,
		},
		{
			name: "a container made before the registry label is the controller's",
			spec: web(1), tasks: []api.Task{ctr("web", 1, api.StateRunning, ""), ctr("web", 2, api.StateRunning, "")},
			deletes: []string{"web-2"},
		},

		// defect 3: two registries on one Docker host
		{
			name:    "another registry's containers of the same id are neither counted nor deleted, and their slot names are skipped",
			spec:    web(2),
			tasks:   []api.Task{ctr("web", 1, api.StateRunning, "other-registry"), ctr("web", 3, api.StateExited, "other-registry")},
			creates: []string{"web-2"}, checkImage: true, failure: api.ReasonSlotConflict,
		},
		{
			name:    "a cascade leaves another registry's containers alone",
			tasks:   []api.Task{ours(1), ctr("web", 2, api.StateRunning, "other-registry")},
			deletes: []string{"web-1"}, gone: true,
		},

		// defect 4: slot names held by containers the sync does not count
		{
			name:    "a selector change: the old containers keep their names, and the node reports the slots blocked",
			spec:    web(2),
			tasks:   []api.Task{with(ours(1), func(t *api.Task) { t.Labels["name"] = "old" }), with(ours(2), func(t *api.Task) { t.Labels["name"] = "old" })},
			failure: api.ReasonSlotConflict,
		},
		{
			name:    "a slot name a hand-started container holds, learned from a create, is skipped",
			spec:    web(3),
			state:   controllerState{conflicts: map[int]slotConflict{1: {holder: "web-1 (abc), started by hand", seen: planNow.Add(-time.Minute)}}},
			creates: []string{"web-2", "web-3"}, checkImage: true, failure: api.ReasonSlotConflict,
		},
		{
			name:    "a learned conflict is tried again once it is old",
			spec:    web(1),
			state:   controllerState{conflicts: map[int]slotConflict{1: {holder: "web-1 (abc)", seen: planNow.Add(-conflictTTL)}}},
			creates: []string{"web-1"}, checkImage: true,
		},

		// defect 5: delete, then create again with the same id
		{
			name: "a spec created again after the manager saw the old one removes the old containers first",
			spec: web(2), createAt: 20, state: controllerState{incarnation: 5},
			tasks: []api.Task{ours(1), ours(2)}, deletes: []string{"web-1", "web-2"}, stale: true, requeued: true,
		},
		{
			name: "a spec created again while the manager was down: the status is older than the spec",
			spec: web(2), createAt: 20, state: controllerState{status: &api.ReplicationControllerStatus{ObservedRevision: 12}},
			tasks: []api.Task{ours(1)}, deletes: []string{"web-1"}, stale: true, requeued: true,
		},
		{
			name: "a status newer than the spec's creation is the same spec's",
			spec: web(2), createAt: 10, state: controllerState{status: &api.ReplicationControllerStatus{ObservedRevision: 12}},
			tasks: []api.Task{ours(1)}, creates: []string{"web-2"}, checkImage: true,
		},

		// issue 26, item 5: the leader rolls the slots of assignments
		// written before they carried a template, within the bounds
		{
			name: "a container of an older template under an assignment without one is kept",
			spec: web(2), tasks: []api.Task{with(ours(1), func(t *api.Task) { t.Labels[api.LabelTemplateHash] = "older" }), ours(2)},
			bare: true,
		},

		// defect 7: a cascade honours the burst limit
		{
			name:    "a cascade deletes a burst at a time",
			tasks:   []api.Task{ours(1), ours(2), ours(3), ours(4), ours(5)},
			burst:   2,
			deletes: []string{"web-1", "web-2"}, gone: true, more: true,
		},
		{
			name:  "a cascade also removes the controller's containers outside its old selector",
			tasks: []api.Task{with(ours(1), func(t *api.Task) { t.Labels["name"] = "old" })}, deletes: []string{"web-1"}, gone: true,
		},
		{
			name:  "a deleted controller without containers is only forgotten",
			gone:  true,
			tasks: nil,
		},
		{
			name: "an invalid spec touches nothing",
			spec: nil, invalid: errors.New("desiredState.replicas: must be between 0 and 1000, got -1"),
			tasks: []api.Task{ours(1), dead(2, time.Minute)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			createAt := tt.createAt
			if createAt == 0 {
				createAt = 1
			}
			burst := tt.burst
			if burst == 0 {
				burst = 50
			}
			in := planInput{
				id: "web", spec: tt.spec, invalid: tt.invalid, revision: 30, createRevision: createAt,
				tasks: tt.tasks, state: tt.state, now: planNow, registryID: testRegistryID, burst: burst,
			}
			if tt.spec != nil {
				in.hash = hash
				in.templates = map[string]*api.TaskTemplate{hash: &tt.spec.DesiredState.TaskTemplate}
				in.assigned = assignedSlots(tt.assigned, tt.spec.DesiredState.Replicas, hash)
				if tt.bare {
					for slot, a := range in.assigned.All() {
						a.Revision, a.TemplateHash = 0, ""
						in.assigned = in.assigned.With(slot, a)
					}
				}
			}
			d := plan(in)
			if got := createNames(d); !slices.Equal(got, tt.creates) {
				t.Errorf("creates = %v, want %v", got, tt.creates)
			}
			if got := deleteNames(d); !slices.Equal(got, tt.deletes) {
				t.Errorf("deletes = %v, want %v", got, tt.deletes)
			}
			if got := renameNames(d); !slices.Equal(got, tt.renames) {
				t.Errorf("renames = %v, want %v", got, tt.renames)
			}
			if got := len(d.creates) > 0 && !d.proven; got != tt.checkImage {
				t.Errorf("asks about the image = %v, want %v", got, tt.checkImage)
			}
			var failure string
			if d.failure != nil {
				failure = d.failure.Reason
			}
			if failure != tt.failure {
				t.Errorf("failure = %q (%v), want %q", failure, d.failure, tt.failure)
			}
			if d.more != tt.more || d.gone != tt.gone || d.stale != tt.stale {
				t.Errorf("more, gone, stale = %v, %v, %v; want %v, %v, %v", d.more, d.gone, d.stale, tt.more, tt.gone, tt.stale)
			}
			if got := d.requeueAfter > 0; got != tt.requeued {
				t.Errorf("requeue after %s, want a requeue: %v", d.requeueAfter, tt.requeued)
			}
			for _, c := range d.creates {
				if c.Labels[api.LabelRegistry] != testRegistryID || c.Labels[api.LabelController] != "web" || c.Labels[api.LabelTemplateHash] != hash {
					t.Errorf("labels of %s = %v, want the registry, controller and template hash", c.Name, c.Labels)
				}
			}
		})
	}
}

// assignedSlots assigns the slots assigned (nil: 1..replicas) to the node under test,
// with template hash.
func assignedSlots(assigned []int, replicas int, hash string) registry.SlotAssignments {
	if assigned == nil {
		for slot := 1; slot <= replicas; slot++ {
			assigned = append(assigned, slot)
		}
	}
	var out registry.SlotAssignments
	for _, slot := range assigned {
		out = out.With(slot, registry.SlotAssignment{Assignment: api.Assignment{Node: "a", Revision: 30, TemplateHash: hash}, Rev: 40})
	}
	return out
}

func TestPlanRecordsAnInvalidSpecOncePerRevision(t *testing.T) {
	invalid := errors.New("desiredState.replicas: must be between 0 and 1000, got -1")
	in := planInput{id: "web", invalid: invalid, revision: 30, now: planNow, registryID: testRegistryID, burst: 50}
	r := settle(in, plan(in), outcome{})
	if len(r.events) != 1 || r.status.FindCondition(api.ConditionInvalidSpec) == nil || r.status.ObservedRevision != 30 {
		t.Fatalf("first look: events %v, status %+v; want one event and InvalidSpec at revision 30", r.events, r.status)
	}
	in.state = r.state
	in.state.status = r.status
	if r := settle(in, plan(in), outcome{}); len(r.events) != 0 {
		t.Errorf("second look at the same revision recorded %v, want nothing", r.events)
	}
}

func TestSettle(t *testing.T) {
	spec := newController("web", 3)
	in := planInput{id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1, now: planNow, registryID: testRegistryID, burst: 50,
		assigned: assignedSlots(nil, 3, webHash), templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate}}

	t.Run("created containers count, and the template is proven", func(t *testing.T) {
		d := plan(in)
		r := settle(in, d, outcome{created: []api.Task{ours(1), ours(2), ours(3)}})
		if r.status.Replicas != 3 || r.status.ReadyReplicas != 3 || r.state.proven != d.hash || r.status.ObservedRevision != 30 {
			t.Errorf("status %+v, proven %q; want 3 ready replicas at revision 30 and %q proven", r.status, r.state.proven, d.hash)
		}
	})
	t.Run("a failed create backs off and says why", func(t *testing.T) {
		d := plan(in)
		r := settle(in, d, outcome{createErrs: []error{errors.New("create web-1: no such image: demo-task:latest")}})
		c := r.status.FindCondition(api.ConditionReplicaFailure)
		if c == nil || c.Reason != api.ReasonCreateFailed || r.state.createBackoff.failures != 1 || r.requeueAfter != createBackoffStart {
			t.Errorf("condition %+v, backoff %+v, requeue %s; want CreateFailed, one step, 1s", c, r.state.createBackoff, r.requeueAfter)
		}
		if r.state.proven != "" {
			t.Errorf("proven = %q after a failure, want none", r.state.proven)
		}
	})
	t.Run("a conflict found by a create is remembered and reported, for the leader to move the slot", func(t *testing.T) {
		d := plan(in)
		r := settle(in, d, outcome{created: []api.Task{ours(2), ours(3)}, conflicts: map[int]slotConflict{1: {holder: "web-1 (abc)", seen: planNow}}})
		if _, ok := r.state.conflicts[1]; !ok || !slices.Equal(r.blocked, []int{1}) {
			t.Errorf("conflicts %v, blocked %v; want slot 1 remembered and reported blocked", r.state.conflicts, r.blocked)
		}
		in2 := in
		in2.state = r.state
		in2.tasks = []api.Task{ours(2), ours(3)}
		if got := createNames(plan(in2)); len(got) != 0 {
			t.Errorf("next plan creates %v, want nothing: the slot is the leader's to move", got)
		}
	})
	t.Run("a cascade forgets the controller once its last container is gone", func(t *testing.T) {
		gone := planInput{id: "web", tasks: []api.Task{ours(1)}, now: planNow, registryID: testRegistryID, burst: 50}
		d := plan(gone)
		if r := settle(gone, d, outcome{deleted: d.deletes}); !r.forget || r.status != nil {
			t.Errorf("forget %v, status %+v; want forgotten and no status", r.forget, r.status)
		}
		if r := settle(gone, d, outcome{deleteErrs: []error{errors.New("delete web-1: refused")}}); r.forget {
			t.Error("forgotten although its container could not be deleted")
		}
	})
	t.Run("a stale spec's status is left alone until the old containers are gone", func(t *testing.T) {
		stale := in
		stale.createRevision = 20
		stale.state = controllerState{incarnation: 5}
		stale.tasks = []api.Task{ours(1)}
		d := plan(stale)
		if r := settle(stale, d, outcome{deleted: d.deletes}); r.status != nil || r.state.incarnation != 5 {
			t.Errorf("status %+v, incarnation %d; want no status and the old incarnation kept", r.status, r.state.incarnation)
		}
		stale.tasks, stale.state = nil, d.state
		if d := plan(stale); d.stale || d.state.incarnation != 20 || len(d.creates) != 3 {
			t.Errorf("after the old containers: stale %v, incarnation %d, creates %d; want the new spec's 3", d.stale, d.state.incarnation, len(d.creates))
		}
	})
}

// Issue 26, item 2: a burst cap left the containers of unassigned slots it
// had not removed yet out of the report, so the leader took their slots
// for released while they still ran here.
func TestAContainerOfAnUnassignedSlotStaysReportedUntilItIsRemoved(t *testing.T) {
	spec := newController("web", 3)
	in := planInput{
		id: "web", spec: spec, hash: webHash, revision: 30, createRevision: 1,
		tasks: []api.Task{ours(1), ours(2), ours(3)}, now: planNow, registryID: testRegistryID, burst: 1,
		templates: map[string]*api.TaskTemplate{webHash: &spec.DesiredState.TaskTemplate},
		assigned:  registry.SlotAssignments{}, // every slot moved to another node
	}
	d := plan(in)
	if got := deleteNames(d); !slices.Equal(got, []string{"web-1"}) || !d.more {
		t.Fatalf("deletes = %v (more %v), want web-1 and more to come: the burst is 1", got, d.more)
	}
	r := settle(in, d, outcome{deleted: []api.Task{ours(1)}})
	if got := runSlots(in.assigned, r.active); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("reported slots = %v, want [2 3]: their containers still run here", got)
	}
	if r.status == nil || r.status.Replicas != 2 {
		t.Errorf("status = %+v, want 2 replicas: the engine still runs web-2 and web-3", r.status)
	}
}
