package agent_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// sidecarNames lists the fake's containers by name, with whose network
// each joined (by name).
func sidecarNames(t *testing.T, h *harness) map[string]string {
	t.Helper()
	tasks := h.fake.Tasks()
	byID := map[string]string{}
	for _, c := range tasks {
		byID[c.ID] = c.Name
	}
	out := map[string]string{}
	for _, c := range tasks {
		out[c.Name] = byID[c.JoinedTo]
	}
	return out
}

func TestATaskOfTwoContainersRunsWholeAndComesBackWhole(t *testing.T) {
	h := newHarness(t, roles.Options{})
	rc := demospec.SidecarController("web", "demo-task:latest", 2, nil)
	h.setSpec(rc)
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"web-1": "", "web-1.prober": "web-1", "web-2": "", "web-2.prober": "web-2"}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Fatalf("containers (name: the one whose network it joined) = %v, want %v", got, want)
	}
	if got := volumeNames(h); !slices.Equal(got, []string{"web-1.scratch", "web-2.scratch"}) {
		t.Errorf("volumes = %v, want one emptyDir per task", got)
	}
	if st := h.status(t, "web"); st == nil || st.Replicas != 2 {
		t.Fatalf("status = %+v, want 2 replicas: a task of two containers counts once", st)
	}

	// the sidecar of slot 1 goes: the whole task is replaced
	var first, side string
	for _, c := range h.fake.Tasks() {
		switch c.Name {
		case "web-1":
			first = c.ID
		case "web-1.prober":
			side = c.ID
		}
	}
	if err := h.fake.DeleteTask(t.Context(), side); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the slot's crash backoff starts at 100ms
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Second)
	}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Fatalf("after the sidecar went: containers = %v, want %v", got, want)
	}
	for _, c := range h.fake.Tasks() {
		if c.ID == first {
			t.Errorf("web-1 (%s) still runs: a task whose part went must be replaced whole", first)
		}
	}

	// the controller goes: every container and volume with it
	h.deleteSpec("web")
	h.syncTimes(t, "web", 2)
	if n := h.fake.Len(); n != 0 {
		t.Errorf("%d containers left after the delete: %v", n, sidecarNames(t, h))
	}
	if got := volumeNames(h); len(got) != 0 {
		t.Errorf("volumes left after the delete: %v", got)
	}
}

func TestAPartWhoseFirstContainerWentIsRemoved(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(demospec.SidecarController("web", "demo-task:latest", 1, nil))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	var oldSide string
	for _, c := range h.fake.Tasks() {
		if c.Name == "web-1" {
			if err := h.fake.DeleteTask(t.Context(), c.ID); err != nil {
				t.Fatal(err)
			}
		}
		if c.Name == "web-1.prober" {
			oldSide = c.ID
		}
	}
	for range 2 {
		if err := h.sync(t, "web"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Second)
	}
	want := map[string]string{"web-1": "", "web-1.prober": "web-1"}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Fatalf("containers = %v, want %v", got, want)
	}
	for _, c := range h.fake.Tasks() {
		if c.ID == oldSide {
			t.Errorf("the orphaned prober %s still runs", oldSide)
		}
	}
}

// volumeNames are the fake's volumes, by name.
func volumeNames(h *harness) []string {
	var out []string
	for _, v := range h.fake.Volumes() {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

func TestARemovedSidecarIsReplacedWithoutACrashLoop(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(demospec.SidecarController("web", "demo-task:latest", 1, nil))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	var side string
	for _, c := range h.fake.Tasks() {
		if c.Name == "web-1.prober" {
			side = c.ID
		}
	}
	if err := h.fake.DeleteTask(t.Context(), side); err != nil { // docker rm -f web-1.prober
		t.Fatal(err)
	}
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if st := h.status(t, "web"); st == nil || st.FindCondition(api.ConditionCrashLoop) != nil {
		t.Errorf("status %+v, want no CrashLoop: the sidecar was removed, it did not crash", st)
	}
	want := map[string]string{"web-1": "", "web-1.prober": "web-1"}
	if got := sidecarNames(t, h); !maps.Equal(got, want) {
		t.Errorf("containers = %v, want %v: the task replaced at once, with no backoff", got, want)
	}
}
