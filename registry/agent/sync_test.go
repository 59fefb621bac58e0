package agent_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/agent"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestSyncReplicationControllerCreates(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := newController("web", 3)
	rev := h.setSpec(rc)

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	validateSyncReplication(t, h.fake, 3, 0)
	tasks := h.fake.Tasks()
	if got, want := names(tasks), []string{"web-1", "web-2", "web-3"}; !slices.Equal(got, want) {
		t.Fatalf("containers = %v, want %v", got, want)
	}
	wantLabels := map[string]string{
		"name": "web", "tier": "demo",
		api.LabelController: "web", api.LabelSlot: "1",
		api.LabelTemplateHash: api.TemplateHash(&rc.DesiredState.TaskTemplate),
		api.LabelRegistry:     testRegistryID,
		api.LabelContainer:    rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Name,
	}
	if !maps.Equal(tasks[0].Labels, wantLabels) {
		t.Errorf("labels of web-1 = %v, want %v", tasks[0].Labels, wantLabels)
	}
	if got := rc.DesiredState.TaskTemplate.Labels; len(got) != 2 {
		t.Errorf("the template's labels were changed: %v", got)
	}
	st := h.status(t, "web")
	if st == nil || st.Replicas != 3 || st.ReadyReplicas != 3 || st.ObservedRevision != rev {
		t.Errorf("status = %+v, want 3 replicas, 3 ready, observed revision %d", st, rev)
	}
}

// A new controller's first sync writes two reports: the claim before the
// creates, which says the spec's revision (a node with nothing of the
// controller yet has nothing of it at that revision; a claim that said 0
// set the leader's observedRevision back to 0 until the next report), and
// the report after them, which counts the new containers available
// although they started after the sync began: with minReadySeconds 0 a
// ready container is available (a third report had said so).
func TestSyncReplicationControllerReportsANewControllerOnceItsContainersRun(t *testing.T) {
	watch := &watchedCreates{}
	h := newHarness(t, roles.Options{TaskControl: watch})
	watch.Fake = h.fake
	rev := h.setSpec(newController("web", 3))
	var claimed atomic.Int64
	claimed.Store(-1)
	watch.onCreate = func(api.TaskSpec) {
		if r := h.report(t, "web"); r != nil {
			claimed.CompareAndSwap(-1, r.Status.ObservedRevision)
		}
		h.clock.Advance(time.Millisecond) // a create takes the engine time
	}

	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := claimed.Load(); got != rev {
		t.Errorf("the claim written before the creates says observedRevision %d, want the spec's %d", got, rev)
	}
	st := h.report(t, "web").Status
	if st.ObservedRevision != rev || st.ReadyReplicas != 3 || st.AvailableReplicas != 3 {
		t.Errorf("report after the creates: observedRevision %d, %d ready, %d available; want %d, 3 and 3",
			st.ObservedRevision, st.ReadyReplicas, st.AvailableReplicas, rev)
	}
	if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Reason != api.ReasonRolloutComplete {
		t.Errorf("report after the creates: Progressing %+v, want %s", c, api.ReasonRolloutComplete)
	}
}

func TestSyncReplicationControllerDeletesHighestSlotsFirst(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	ids := map[int]string{}
	for slot := 1; slot <= 5; slot++ {
		ids[slot] = h.addTask(t, "web", slot, api.StateRunning)
	}

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	validateSyncReplication(t, h.fake, 0, 3)
	deleted := h.fake.Deletes()
	slices.Sort(deleted)
	want := []string{ids[3], ids[4], ids[5]}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want slots 3, 4, 5 (%v)", deleted, want)
	}
	if st := h.status(t, "web"); st == nil || st.Replicas != 2 {
		t.Errorf("status = %+v, want 2 replicas", st)
	}
}

func TestSyncReplicationControllerNoOp(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	h.addTask(t, "web", 1, api.StateRunning)
	h.addTask(t, "web", 2, api.StateRunning)

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	validateSyncReplication(t, h.fake, 0, 0)
	if st := h.status(t, "web"); st == nil || st.Replicas != 2 {
		t.Errorf("status = %+v, want 2 replicas", st)
	}
}

func TestSyncReplicationControllerReplacesExitedContainerAndKeepsItForInspection(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	h.addTask(t, "web", 1, api.StateRunning)
	dead := h.addTask(t, "web", 2, api.StateExited)

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	validateSyncReplication(t, h.fake, 1, 0)
	if got, want := h.fake.Renames(), []string{dead + " " + agent.DeadName("web", dead)}; !slices.Equal(got, want) {
		t.Errorf("renames = %v, want %v: the dead container moves out of its slot", got, want)
	}
	if got := h.fake.Creates(); !slices.Equal(got, []string{"web-2"}) {
		t.Errorf("creates = %v, want [web-2]: the exited container's slot", got)
	}
}

func TestSyncReplicationControllerKeepsOnlyTheNewestDeadContainer(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 3))
	var dead []string
	for slot := 1; slot <= 3; slot++ {
		dead = append(dead, h.addTask(t, "web", slot, api.StateRunning))
		h.clock.Advance(time.Minute)
	}
	for _, id := range dead { // all die, slot 3 last
		h.fake.SetState(id, api.StateExited, 1)
		h.clock.Advance(time.Second)
	}

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	deleted := h.fake.Deletes()
	slices.Sort(deleted)
	want := []string{dead[0], dead[1]}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want the two older dead containers %v", deleted, want)
	}
	if got := names(h.fake.Tasks()); !slices.Equal(got, []string{"web-1", "web-2", "web-3", agent.DeadName("web", dead[2])}) {
		t.Errorf("containers = %v, want three new replicas and the newest dead one", got)
	}
	// the kept one stays kept: no churn on the next sync
	h.fake.Reset()
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if calls := h.fake.Counts(); calls.Create+calls.Delete+calls.Rename != 0 {
		t.Errorf("second sync made calls %+v, want none", calls)
	}
}

func TestSyncReplicationControllerNeverTouchesUnownedContainers(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	// started by hand with the same user labels, but no ownership label
	if _, err := h.fake.Add(api.Task{Name: "by-hand", Labels: map[string]string{"name": "web", "tier": "demo"}}); err != nil {
		t.Fatal(err)
	}
	// owned by label, but outside the selector: not counted, not touched
	if _, err := h.fake.Add(api.Task{Name: "other", Labels: map[string]string{"name": "other", api.LabelController: "web"}}); err != nil {
		t.Fatal(err)
	}

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	validateSyncReplication(t, h.fake, 1, 0)
	h.setSpec(newController("web", 0))
	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	got := names(h.fake.Tasks())
	if want := []string{"by-hand", "other"}; !slices.Equal(got, want) {
		t.Errorf("after scaling to 0 containers are %v, want %v", got, want)
	}
}

func TestSyncReplicationControllerReturnsAMissingImageWithoutCreating(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := newController("web", 3)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].ImagePullPolicy = api.PullNever // never pulled
	h.setSpec(rc)
	var broken atomic.Bool
	broken.Store(true)
	h.fake.ImageErr = func(image string) error {
		if broken.Load() {
			return fmt.Errorf("%w: %s", taskcontrol.ErrImageNotFound, image)
		}
		return nil
	}

	err := h.sync(t, "web")
	if err == nil || !errors.Is(err, taskcontrol.ErrImageNotFound) {
		t.Fatalf("sync error = %v, want one wrapping ErrImageNotFound", err)
	}
	validateSyncReplication(t, h.fake, 0, 0) // the engine was asked first
	st := h.status(t, "web")
	c := st.FindCondition(api.ConditionReplicaFailure)
	if c == nil || c.Reason != api.ReasonCreateFailed || !strings.Contains(c.Message, "demo-task:latest") {
		t.Fatalf("ReplicaFailure condition = %+v, want CreateFailed naming the image", c)
	}

	broken.Store(false)
	h.clock.Advance(agent.CreateBackoffStart)
	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	st = h.status(t, "web")
	if st.Replicas != 3 || st.FindCondition(api.ConditionReplicaFailure) != nil {
		t.Errorf("after the image appeared: status = %+v, want 3 replicas and no ReplicaFailure", st)
	}
}

func TestSyncReplicationControllerReturnsListErrorAndReleasesLock(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	h.fake.ListErr = func() error { return errors.New("docker: connection refused") }

	err := h.sync(t, "web")
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("sync error = %v, want the list error", err)
	}
	validateSyncReplication(t, h.fake, 0, 0)
}

func TestSyncReplicationControllerCapsCreatesAtBurst(t *testing.T) {
	h := newHarness(t, roles.Options{BurstReplicas: 4})
	h.setSpec(newController("web", 10))

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	validateSyncReplication(t, h.fake, 4, 0)
	if got := h.rm.QueueLen(); got != 1 {
		t.Errorf("queue length = %d, want 1: the controller is queued again to go on", got)
	}
}

func TestSyncReplicationControllerSlowStartsAfterAFailureAndStopsAtTheFirstFailingBatch(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 20))
	var refuse func(name string) bool
	h.fake.CreateErr = func(spec api.TaskSpec) error {
		if refuse(spec.Name) {
			return errors.New("daemon refused")
		}
		return nil
	}
	refuse = func(string) bool { return true }
	if err := h.sync(t, "web"); err == nil {
		t.Fatal("sync succeeded, want the create error")
	}
	validateSyncReplication(t, h.fake, 20, 0) // nothing failed before: one batch

	h.fake.Reset()
	h.clock.Advance(agent.CreateBackoffStart)
	refuse = func(name string) bool { return name == "web-3" } // in the second batch (web-2, web-3)
	if err := h.sync(t, "web"); err == nil {
		t.Fatal("sync succeeded, want the create error")
	}
	validateSyncReplication(t, h.fake, 3, 0) // batches of 1 and 2, then stop
}

func TestSyncReplicationControllerSlotNameHeldByAnotherContainerUsesTheNextSlot(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	// a container the manager cannot see as its own holds the name web-1
	if _, err := h.fake.Add(api.Task{Name: "web-1", Labels: map[string]string{"name": "someone-else"}}); err != nil {
		t.Fatal(err)
	}

	for range 3 {
		if err := h.sync(t, "web"); err != nil {
			t.Fatalf("sync: %v", err)
		}
	}
	if got, want := names(h.fake.Tasks()), []string{"web-1", "web-2", "web-3"}; !slices.Equal(got, want) {
		t.Errorf("containers = %v, want %v: web-1 is left alone, the replicas take slots 2 and 3", got, want)
	}
	st := h.status(t, "web")
	c := st.FindCondition(api.ConditionReplicaFailure)
	if st.Replicas != 2 || c == nil || c.Reason != api.ReasonSlotConflict || !strings.Contains(c.Message, "web-1") {
		t.Errorf("status = %+v, want 2 replicas and a SlotConflict naming web-1", st)
	}
}

func TestSyncReplicationControllerInvalidSpecTouchesNothing(t *testing.T) {
	h := newHarness(t, roles.Options{MaxReplicas: 50})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.setSpec(newController("api", 2))
	h.fake.Reset()

	for name, mutate := range map[string]func(*api.ReplicationController){
		"negative replicas":  func(rc *api.ReplicationController) { rc.DesiredState.Replicas = -1 },
		"above max replicas": func(rc *api.ReplicationController) { rc.DesiredState.Replicas = 51 },
		"empty selector":     func(rc *api.ReplicationController) { rc.DesiredState.ReplicasInSet = nil },
		"selector not in labels": func(rc *api.ReplicationController) {
			rc.DesiredState.ReplicasInSet = map[string]string{"name": "other"}
		},
		"reserved label": func(rc *api.ReplicationController) {
			rc.DesiredState.TaskTemplate.Labels[api.LabelController] = "x"
		},
		"id differs from key": func(rc *api.ReplicationController) { rc.ID = "api" },
	} {
		t.Run(name, func(t *testing.T) {
			rc := newController("web", 0)
			mutate(rc)
			data, err := json.Marshal(rc)
			if err != nil {
				t.Fatal(err)
			}
			h.setRawSpec("web", data)
			if err := h.sync(t, "web"); err != nil {
				t.Fatalf("sync of an invalid spec returned %v, want nil: retrying cannot fix it", err)
			}
			validateSyncReplication(t, h.fake, 0, 0)
			c := h.status(t, "web").FindCondition(api.ConditionInvalidSpec)
			if c == nil || c.Message == "" {
				t.Errorf("no InvalidSpec condition with a message in the status")
			}
		})
	}
	if n := len(h.fake.Tasks()); n != 1 {
		t.Errorf("web has %d containers, want its 1 left alone", n)
	}
	if err := h.sync(t, "api"); err != nil {
		t.Fatalf("sync of another controller: %v", err)
	}
	if got := h.fake.Creates(); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"api-1", "api-2"}) {
		t.Errorf("creates of api = %v, want [api-1 api-2]", got)
	}
}

func TestSyncReplicationControllerUndecodableSpecTouchesNothing(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.fake.Reset()
	h.setRawSpec("web", []byte(`{"id":"web","desiredState":{"replica":1}}`))

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync = %v, want nil", err)
	}
	validateSyncReplication(t, h.fake, 0, 0)
	c := h.status(t, "web").FindCondition(api.ConditionInvalidSpec)
	if c == nil || c.Reason != api.ReasonUndecodable || !strings.Contains(c.Message, "replica") {
		t.Errorf("condition = %+v, want InvalidSpec/Undecodable naming the field", c)
	}
}

func TestSyncReplicationControllerDeletedRemovesContainersAndStatus(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.addTask(t, "web", 7, api.StateExited)
	h.deleteSpec("web")

	if err := h.sync(t, "web"); err != nil {
		t.Fatalf("sync of a deleted controller: %v", err)
	}
	if n := h.fake.Len(); n != 0 {
		t.Errorf("%d containers left, want 0", n)
	}
	if st := h.status(t, "web"); st != nil {
		t.Errorf("status still stored: %+v", st)
	}
}

func TestSyncReplicationControllerWaitsForFirstList(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.addTask(t, "web", 1, api.StateRunning)

	if err := h.sync(t, "web"); !errors.Is(err, agent.ErrNotListed) {
		t.Fatalf("sync before the first list = %v, want errNotListed", err)
	}
	validateSyncReplication(t, h.fake, 0, 0)
}
