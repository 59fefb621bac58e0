package agent

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/registry/leader"
)

// dryRunNow is the dry runs' clock.
var dryRunNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// dryRunWeb is controller web of replicas, at image.
func dryRunWeb(replicas int, image string) *api.ReplicationController {
	return demospec.Controller("web", image, replicas, nil)
}

// dryRunRegistry is etcd as a dry run reads it: web's slots 1..n running
// rc's template for an hour, slot i on nodeOf[i-1], assigned and reported
// as a leader and its nodes leave them; nodes are the registered nodes.
func dryRunRegistry(rc *api.ReplicationController, nodes []api.Node, nodeOf ...string) leader.DryRunInput {
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	in := leader.DryRunInput{Controllers: []registry.Spec{{ID: rc.ID, Controller: rc, ModRevision: 10, CreateRevision: 10}},
		Assignments: map[string]map[int]api.Assignment{}, Nodes: nodes, Now: dryRunNow}
	reports := map[string]*api.NodeReport{}
	for i, node := range nodeOf {
		slot := i + 1
		if in.Assignments[rc.ID] == nil {
			in.Assignments[rc.ID] = map[int]api.Assignment{}
		}
		in.Assignments[rc.ID][slot] = api.Assignment{Node: node, Revision: 10, TemplateHash: hash}
		if !slices.ContainsFunc(nodes, func(n api.Node) bool { return n.Name == node }) {
			continue // gone, with its report
		}
		r := reports[node]
		if r == nil {
			r = &api.NodeReport{Node: node, Status: api.ReplicationControllerStatus{ID: rc.ID}}
			reports[node] = r
		}
		started := dryRunNow.Add(-time.Hour)
		r.Tasks = append(r.Tasks, api.ReportedTask{Name: api.TaskName(rc.ID, slot), ID: "c" + strconv.Itoa(slot), Slot: slot,
			Image: "demo-task:latest", State: api.StateRunning, TemplateHash: hash, Created: started, StartedAt: started, Monitored: true})
		r.Slots = append(r.Slots, slot)
	}
	for _, node := range slices.Sorted(maps.Keys(reports)) {
		in.Reports = append(in.Reports, *reports[node])
	}
	return in
}

func dryRunNodes(names ...string) []api.Node {
	out := make([]api.Node, len(names))
	for i, n := range names {
		out[i] = api.Node{Name: n, Labels: map[string]string{"zone": n}}
	}
	return out
}

// dryRunLines renders steps as "action container on node (detail)", a
// move as "move container from → to (detail)".
func dryRunLines(plan leader.DryRunPlan) []string {
	out := []string{}
	for _, s := range plan.Steps {
		line := s.Action + " " + s.Container + " on " + s.Node
		if s.Action == "move" {
			line = s.Action + " " + s.Container + " " + s.From + " → " + s.Node
		}
		if s.Detail != "" {
			line += " (" + s.Detail + ")"
		}
		out = append(out, line)
	}
	return out
}

func TestDryRunShowsWhatTheRegistryWouldDoNodeByNode(t *testing.T) {
	old := dryRunWeb(4, "demo-task:latest")
	oldHash := api.TemplateHash(&old.DesiredState.TaskTemplate)
	newHash := api.TemplateHash(&dryRunWeb(4, "demo-task:2").DesiredState.TaskTemplate)
	one, zero := intstr.FromInt(1), intstr.FromInt(0)
	tests := []struct {
		name string
		in   func() leader.DryRunInput
		want []string
	}{
		{"an unchanged spec over two nodes changes nothing", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
			in.Spec, in.Revision = old, 10
			return in
		}, []string{}},
		{"a scale-up spreads the new containers", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
			in.Spec, in.Revision = dryRunWeb(6, "demo-task:latest"), 11
			return in
		}, []string{"create web-5 on a", "create web-6 on b"}},
		{"a new controller spreads over the nodes", func() leader.DryRunInput {
			in := leader.DryRunInput{Spec: old, Revision: 11, Nodes: dryRunNodes("a", "b"), Now: dryRunNow}
			return in
		}, []string{"create web-1 on a", "create web-2 on b", "create web-3 on a", "create web-4 on b"}},
		{"a scale-down removes a paused container first, then the highest", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
			in.Reports[1].Tasks[0].State = api.StatePaused // web-2, on b
			in.Spec, in.Revision = dryRunWeb(2, "demo-task:latest"), 11
			return in
		}, []string{"remove web-2 on b (scale-down to 2)", "remove web-4 on b (scale-down to 2)"}},
		{"a new template replaces one container at a time, stop first", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
			in.Spec, in.Revision = dryRunWeb(4, "demo-task:2"), 11
			return in
		}, []string{
			"replace web-4 on b (template " + oldHash + " → " + newHash + ", stopped first)",
			"replace web-3 on a (template " + oldHash + " → " + newHash + ", stopped first)",
			"replace web-2 on b (template " + oldHash + " → " + newHash + ", stopped first)",
			"replace web-1 on a (template " + oldHash + " → " + newHash + ", stopped first)",
		}},
		{"a new template replaces containers that started a moment ago once their nodes vouch for them", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b")
			for _, r := range in.Reports {
				for i := range r.Tasks {
					r.Tasks[i].StartedAt, r.Tasks[i].Monitored = dryRunNow.Add(-time.Second), false
				}
			}
			in.Spec, in.Revision = dryRunWeb(2, "demo-task:2"), 11
			return in
		}, []string{
			"replace web-2 on b (template " + oldHash + " → " + newHash + ", stopped first)",
			"replace web-1 on a (template " + oldHash + " → " + newHash + ", stopped first)",
		}},
		{"a new template with a surge starts each successor first", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b")
			rc := dryRunWeb(2, "demo-task:2")
			rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: &one, MaxUnavailable: &zero}
			in.Spec, in.Revision = rc, 11
			return in
		}, []string{
			"replace web-2 on b (template " + oldHash + " → " + newHash + ", started first)",
			"replace web-1 on a (template " + oldHash + " → " + newHash + ", started first)",
		}},
		{"a new template under OnDelete replaces nothing that runs", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b")
			rc := dryRunWeb(2, "demo-task:2")
			rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{Type: api.OnDelete}
			in.Spec, in.Revision = rc, 11
			return in
		}, []string{}},
		{"a new nodeSelector moves the containers off the node it no longer matches, one at a time", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
			rc := dryRunWeb(4, "demo-task:latest")
			rc.DesiredState.NodeSelector = map[string]string{"zone": "b"}
			in.Spec, in.Revision = rc, 11
			return in
		}, []string{
			"move web-3 a → b (nodeSelector no longer matches node a)",
			"move web-1 a → b (nodeSelector no longer matches node a)",
		}},
		{"the slots of a node gone past its grace are created on the others", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "c", "c")
			in.Spec, in.Revision = old, 10
			return in
		}, []string{"create web-3 on a (node c is gone)", "create web-4 on b (node c is gone)"}},
		{"a slot whose name an outsider holds on its node moves to another", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a")
			in.Reports[0].Tasks = in.Reports[0].Tasks[:1] // a's web-3 is someone else's container
			in.Reports[0].BlockedSlots = []int{3}
			in.Spec, in.Revision = dryRunWeb(3, "demo-task:latest"), 11
			return in
		}, []string{"create web-3 on b (its name is taken on node a by a container outside the set)"}},
		{"an assigned container that a node has not created yet is created", func() leader.DryRunInput {
			in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
			in.Reports[1].Tasks = in.Reports[1].Tasks[:1] // b has not created web-4 yet
			in.Spec, in.Revision = old, 10
			return in
		}, []string{"create web-4 on b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := leader.DryRun(tt.in())
			if err != nil {
				t.Fatal(err)
			}
			if got := dryRunLines(plan); !slices.Equal(got, tt.want) {
				t.Errorf("steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if !plan.Settled || len(plan.Unschedulable) > 0 {
				t.Errorf("settled %v, unschedulable %v (%s); want settled and none", plan.Settled, plan.Unschedulable, plan.Reason)
			}
		})
	}
}

func TestDryRunChangesNothingInItsInput(t *testing.T) {
	old := dryRunWeb(4, "demo-task:latest")
	in := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
	in.Spec, in.Revision = dryRunWeb(2, "demo-task:2"), 11
	wantAssignments := map[int]api.Assignment{}
	maps.Copy(wantAssignments, in.Assignments["web"])
	var wantReports []api.NodeReport
	for _, r := range in.Reports {
		r.Tasks, r.Slots = slices.Clone(r.Tasks), slices.Clone(r.Slots)
		wantReports = append(wantReports, r)
	}

	if _, err := leader.DryRun(in); err != nil {
		t.Fatal(err)
	}

	if !maps.Equal(in.Assignments["web"], wantAssignments) {
		t.Errorf("assignments changed: %v, want %v", in.Assignments["web"], wantAssignments)
	}
	if !reflect.DeepEqual(in.Reports, wantReports) {
		t.Errorf("reports changed: %+v, want %+v", in.Reports, wantReports)
	}
}

func TestDryRunNamesTheContainersNoNodeCanTake(t *testing.T) {
	withPort := func(replicas int) *api.ReplicationController {
		rc := dryRunWeb(replicas, "demo-task:latest")
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports = []api.Port{{ContainerPort: 8080, HostPort: 18080}}
		return rc
	}
	in := dryRunRegistry(withPort(2), dryRunNodes("a", "b"), "a", "b")
	in.Spec, in.Revision = withPort(3), 11

	plan, err := leader.DryRun(in)
	if err != nil {
		t.Fatal(err)
	}

	if got := dryRunLines(plan); len(got) != 0 {
		t.Errorf("steps %q, want none", got)
	}
	if !slices.Equal(plan.Unschedulable, []string{"web-3"}) {
		t.Errorf("unschedulable %q, want [web-3]", plan.Unschedulable)
	}
	for _, want := range []string{"a: host port 18080/TCP is taken", "b: host port 18080/TCP is taken"} {
		if !strings.Contains(plan.Reason, want) {
			t.Errorf("reason %q, want it to name %q", plan.Reason, want)
		}
	}
}

func TestDryRunCountsTheOtherControllersOnTheNodes(t *testing.T) {
	// api's 3 slots on a make b the emptier node, where web's first slot goes
	api3 := demospec.Controller("api", "demo-task:latest", 3, nil)
	in := leader.DryRunInput{Spec: dryRunWeb(1, "demo-task:latest"), Revision: 11, Nodes: dryRunNodes("a", "b"), Now: dryRunNow,
		Controllers: []registry.Spec{{ID: "api", Controller: api3, ModRevision: 5}},
		Assignments: map[string]map[int]api.Assignment{"api": {1: {Node: "a"}, 2: {Node: "a"}, 3: {Node: "a"}}}}

	plan, err := leader.DryRun(in)
	if err != nil {
		t.Fatal(err)
	}

	if got := dryRunLines(plan); !slices.Equal(got, []string{"create web-1 on b"}) {
		t.Errorf("steps %q, want [create web-1 on b]", got)
	}
}

func TestDryRunRefusesWhatTheLeaderWouldRefuse(t *testing.T) {
	in := leader.DryRunInput{Spec: dryRunWeb(5, "demo-task:latest"), Revision: 11, Nodes: dryRunNodes("a"), MaxReplicas: 3, Now: dryRunNow}

	_, err := leader.DryRun(in)

	if err == nil || !strings.Contains(err.Error(), "desiredState.replicas") {
		t.Errorf("err = %v, want the replicas refused", err)
	}
}

// The node and the dry run play one model of what a node does with its
// assignments (registry/nodemodel); when each had its own, they parted on
// assignments written before assignments carried a template (issue 26,
// item 5): the node keeps the outdated container such an assignment runs,
// for the leader to roll within the bounds, while the dry run replaced
// every one at once, stop first.
func TestTheNodeAndTheDryRunLeaveTheOutdatedContainerOfABareAssignmentToTheLeader(t *testing.T) {
	old, rc := dryRunWeb(4, "demo-task:latest"), dryRunWeb(4, "demo-task:2")
	oldHash, newHash := api.TemplateHash(&old.DesiredState.TaskTemplate), api.TemplateHash(&rc.DesiredState.TaskTemplate)
	hashed := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
	hashed.Spec, hashed.Revision = rc, 11
	bare := dryRunRegistry(old, dryRunNodes("a", "b"), "a", "b", "a", "b")
	bare.Spec, bare.Revision = rc, 11
	for slot, a := range bare.Assignments["web"] {
		bare.Assignments["web"][slot] = api.Assignment{Node: a.Node}
	}

	// node a, slots 1 and 3, as its plan sees them
	node := plan(planInput{
		id: "web", spec: rc, revision: 11, createRevision: 10, hash: newHash, now: dryRunNow, registryID: testRegistryID, burst: 50,
		tasks: []api.Task{
			with(ours(1), func(t *api.Task) { t.Labels[api.LabelTemplateHash] = oldHash }),
			with(ours(3), func(t *api.Task) { t.Labels[api.LabelTemplateHash] = oldHash }),
		},
		assigned: registry.SlotAssignments{}.With(1, registry.SlotAssignment{Assignment: bare.Assignments["web"][1]}).
			With(3, registry.SlotAssignment{Assignment: bare.Assignments["web"][3]}),
		templates: map[string]*api.TaskTemplate{newHash: &rc.DesiredState.TaskTemplate},
	})
	dryBare, err := leader.DryRun(bare)
	if err != nil {
		t.Fatal(err)
	}
	dryHashed, err := leader.DryRun(hashed)
	if err != nil {
		t.Fatal(err)
	}

	if len(node.creates)+len(node.deletes)+len(node.renames) > 0 {
		t.Errorf("node a creates %v, deletes %v, renames %v; want it to keep its containers", createNames(node), deleteNames(node), renameNames(node))
	}
	if got, want := dryRunLines(dryBare), dryRunLines(dryHashed); !slices.Equal(got, want) {
		t.Errorf("the dry run of bare assignments:\n  %s\nwant the leader's paced steps, as for assignments with a template:\n  %s",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
