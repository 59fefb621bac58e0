package agent_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry/roles"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

type taskcontrolStop = taskcontrol.FakeStop

// initController is the sidecar example with two init containers, fill
// and migrate, that both mount the task's volume.
func initController(id string, replicas int) *api.ReplicationController {
	rc := demospec.SidecarController(id, "demo-task:latest", replicas, nil)
	m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
	mount := []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	m.InitContainers = []api.Container{
		{Name: "fill", Image: "demo-task:latest", VolumeMounts: mount},
		{Name: "migrate", Image: "demo-task:latest", VolumeMounts: mount},
	}
	return rc
}

// initExits makes the fake's init containers end at once with the exit
// code of their name in codes (0 for a name not there), and records the
// order they ran in.
type initExits struct {
	mu    sync.Mutex
	codes map[string]int
	ran   []string
}

func (e *initExits) exit(t api.Task) (api.TaskExit, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ran = append(e.ran, t.Name)
	code := e.codes[t.Labels[api.LabelContainer]]
	return api.TaskExit{ExitCode: code, Output: "starting\nreading /scratch/config\nno config, giving up\n"}, true
}

func (e *initExits) set(name string, code int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.codes[name] = code
}

func (e *initExits) order() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ran)
}

// containerNames lists the fake's containers by name.
func containerNames(h *harness) []string {
	var names []string
	for _, c := range h.fake.Tasks() {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names
}

func TestInitContainersRunInOrderBeforeTheTaskAndAreGoneOnceItRuns(t *testing.T) {
	h := newHarness(t, roles.Options{})
	exits := &initExits{codes: map[string]int{}}
	h.fake.Exit = exits.exit
	h.setSpec(initController("web", 1))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got, want := exits.order(), []string{"web-1.init-fill", "web-1.init-migrate"}; !slices.Equal(got, want) {
		t.Errorf("init containers ran: %v, want %v", got, want)
	}
	creates := h.fake.Creates()
	if want := []string{"web-1.init-fill", "web-1.init-migrate", "web-1", "web-1.prober"}; !slices.Equal(creates, want) {
		t.Errorf("creates = %v, want the init containers, one after another, then the task", creates)
	}
	if got, want := containerNames(h), []string{"web-1", "web-1.prober"}; !slices.Equal(got, want) {
		t.Errorf("containers = %v, want %v: no init container left once the task runs", got, want)
	}
	st := h.status(t, "web")
	if st == nil || st.Replicas != 1 || st.FindCondition(api.ConditionReplicaFailure) != nil {
		t.Fatalf("status = %+v, want 1 replica and no failure: init containers do not count", st)
	}
}

func TestAFailingInitContainerIsKeptReportedAndTriedAgainAfterTheCrashBackoff(t *testing.T) {
	h := newHarness(t, roles.Options{})
	exits := &initExits{codes: map[string]int{"migrate": 3}}
	h.fake.Exit = exits.exit
	h.setSpec(initController("web", 1))
	if err := h.sync(t, "web"); err == nil {
		t.Error("sync of a failing init container: no error")
	}
	if got, want := containerNames(h), []string{"web-1.init-migrate"}; !slices.Equal(got, want) {
		t.Fatalf("containers = %v, want only the failed init container, kept for inspection under its name", got)
	}
	if got := volumeNames(h); !slices.Equal(got, []string{"web-1.scratch"}) {
		t.Errorf("volumes = %v, want the task's, which the kept init container mounts", got)
	}
	st := h.status(t, "web")
	c := st.FindCondition(api.ConditionReplicaFailure)
	if c == nil || c.Reason != api.ReasonInitFailed {
		t.Fatalf("ReplicaFailure = %+v, want reason %s", c, api.ReasonInitFailed)
	}
	for _, want := range []string{"migrate", "web-1.init-migrate", "code 3", "no config, giving up"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not say %q", c.Message, want)
		}
	}
	if st.Replicas != 0 {
		t.Errorf("replicas = %d, want 0: an init container is not the task", st.Replicas)
	}

	// within the backoff nothing is tried, and the failure stays
	creates := len(h.fake.Creates())
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got := len(h.fake.Creates()); got != creates {
		t.Errorf("creates within the backoff: %d, want none", got-creates)
	}
	if c := h.status(t, "web").FindCondition(api.ConditionReplicaFailure); c == nil || c.Reason != api.ReasonInitFailed {
		t.Errorf("ReplicaFailure within the backoff = %+v, want %s kept", c, api.ReasonInitFailed)
	}

	// the next try removes the kept one, and this time it passes
	exits.set("migrate", 0)
	h.clock.Advance(time.Second)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if got, want := containerNames(h), []string{"web-1", "web-1.prober"}; !slices.Equal(got, want) {
		t.Errorf("containers = %v, want %v", got, want)
	}
	st = h.status(t, "web")
	if st.Replicas != 1 || st.FindCondition(api.ConditionReplicaFailure) != nil {
		t.Errorf("status = %+v, want 1 replica and the failure cleared", st)
	}
}

func TestAnInitContainerLeftRunningByAStoppedNodeIsStoppedAndTheTaskStartsOver(t *testing.T) {
	h := newHarness(t, roles.Options{})
	// a task of one container, which nothing but the label tells from
	// its init containers
	rc := initController("web", 1)
	m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
	m.Containers = m.Containers[:1]
	h.setSpec(rc)
	labels := map[string]string{api.LabelController: "web", api.LabelSlot: "1", api.LabelRegistry: testRegistryID, "name": "web",
		api.LabelTemplateHash: api.TemplateHash(&rc.DesiredState.TaskTemplate)}
	left, err := h.fake.CreateTask(t.Context(), api.InitSpecs("web", 1, &rc.DesiredState.TaskTemplate.DesiredState.Manifest, labels)[0])
	if err != nil {
		t.Fatal(err)
	}
	exits := &initExits{codes: map[string]int{}}
	h.fake.Exit = exits.exit
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(h.fake.Stops(), func(s taskcontrolStop) bool { return s.ID == left.ID }) {
		t.Errorf("the init container left running (%s) was not stopped; stops: %+v", left.ID, h.fake.Stops())
	}
	if got, want := exits.order(), []string{"web-1.init-fill", "web-1.init-migrate"}; !slices.Equal(got, want) {
		t.Errorf("init containers ran: %v, want %v: the task starts over", got, want)
	}
	if got, want := containerNames(h), []string{"web-1"}; !slices.Equal(got, want) {
		t.Errorf("containers = %v, want %v", got, want)
	}
	if st := h.status(t, "web"); st.Replicas != 1 {
		t.Errorf("replicas = %d, want 1: an init container is never counted", st.Replicas)
	}

	h.deleteSpec("web")
	h.syncTimes(t, "web", 2)
	if got := containerNames(h); len(got) != 0 {
		t.Errorf("containers after the controller went: %v, want none", got)
	}
}

func TestAnInitContainerRunningWhenItsSlotIsRemovedIsStoppedAndTheTaskNeverStarts(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := initController("web", 1)
	h.setSpec(rc)
	done := make(chan error, 1)
	go func() { done <- h.sync(t, "web") }()

	var running api.Task
	deadline := time.Now().Add(10 * time.Second)
	for running.ID == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no init container runs; containers: %v", containerNames(h))
		}
		for _, c := range h.fake.Tasks() {
			if c.Name == "web-1.init-fill" && c.State == api.StateRunning {
				running = c
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the sync ended (%v) while its init container ran", err)
	default:
	}

	// scaled to 0: the leader takes the slot away while fill runs
	rc.DesiredState.Replicas = 0
	h.setSpec(rc)
	h.assign(t, "web")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("sync: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the init container still runs 10s after its slot was removed")
	}
	if !slices.ContainsFunc(h.fake.Stops(), func(s taskcontrolStop) bool { return s.ID == running.ID }) {
		t.Errorf("the init container was not stopped as containers are; stops: %+v", h.fake.Stops())
	}
	if got := containerNames(h); len(got) != 0 {
		t.Errorf("containers = %v, want none: neither the init container nor its task", got)
	}
	if creates := h.fake.Creates(); !slices.Equal(creates, []string{"web-1.init-fill"}) {
		t.Errorf("creates = %v, want only the init container that was stopped", creates)
	}
	if got := volumeNames(h); len(got) != 0 {
		t.Errorf("volumes = %v, want none: the task's create made them, and it did not happen", got)
	}
}
