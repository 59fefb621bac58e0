package agent_test

// Tests of the defects an outside review found that show through a whole
// host (the external harness); defects_test.go has the others.

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry/roles"
)

// Defect 1: controllers/a/web holding id "web" managed web's containers.
func TestNestedKeyIsNotAController(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := newHarness(t, roles.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	h.run(t)
	h.create(t, newController("web", 2))
	h.waitForNames(t, "web-1", "web-2")
	testpoll.Until(t, waitTimeout, "web's status", func() bool { st := h.status(t, "web"); return st != nil && st.Replicas == 2 })
	before := h.status(t, "web")

	nested := h.store.ControllersPrefix() + "a/web"
	data, err := api.Encode(newController("web", 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := h.client.Put(ctx, nested, string(data)); err != nil {
		t.Fatal(err)
	}
	// a later controller write is seen, so the nested one was too
	h.create(t, newController("marker", 1))
	h.waitForNames(t, "marker-1", "web-1", "web-2")
	if _, err := h.client.Delete(ctx, nested); err != nil {
		t.Fatal(err)
	}
	if err := h.store.DeleteController(ctx, "marker"); err != nil {
		t.Fatal(err)
	}
	h.waitForNames(t, "web-1", "web-2")

	if got := h.status(t, "web"); got.Replicas != 2 || got.ObservedRevision != before.ObservedRevision {
		t.Errorf("web's status = %+v, want 2 replicas at revision %d: the nested key must not write it", got, before.ObservedRevision)
	}
	resp, err := h.client.Get(ctx, h.store.StatusPrefix()+"a/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d status keys below status/controllers/a/, want none", resp.Count)
	}
	if n := strings.Count(logs.String(), nested); n != 1 {
		t.Errorf("the nested key is named in %d log lines, want one warning:\n%s", n, logs.String())
	}
}

func TestRelistsRunOneAtATime(t *testing.T) {
	h := newHarness(t, roles.Options{})
	inList := make(chan struct{}, 2)
	release := make(chan struct{})
	h.fake.ListErr = func() error {
		inList <- struct{}{}
		<-release
		return nil
	}
	ctx := t.Context()
	errs := make(chan error, 2)
	go func() { errs <- h.rm.RelistTasks(ctx) }()
	go func() { errs <- h.rm.RelistTasks(ctx) }()
	<-inList
	select {
	case <-inList:
		t.Fatal("two container lists ran at once")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// Defect 8: a dead container someone started again was still renamed or
// deleted after the inspect showed it running.
func TestADeadContainerStartedAgainIsCounted(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 1))
	id := h.addTask(t, "web", 1, api.StateExited)
	ctx := t.Context()
	if err := h.rm.RelistTasks(ctx); err != nil {
		t.Fatal(err)
	}
	// docker start, unseen by the cache: the events are lost
	h.fake.SetState(id, api.StateRunning, 0)
	if err := h.step(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if c := h.fake.Counts(); c.Rename+c.Delete+c.Create != 0 {
		t.Errorf("calls %+v, want none: the container runs again", h.fake.Calls())
	}
	if st := h.status(t, "web"); st.Replicas != 1 {
		t.Errorf("status = %+v, want 1 replica", st)
	}
}

// Defect 11: the spec cache kept every deletion until the next full list,
// and the proven templates were never forgotten.
func TestADeletedControllerIsForgottenWithItsLastContainer(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.setSpec(newController("web", 2))
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	h.deleteSpec("web")
	if err := h.sync(t, "web"); err != nil {
		t.Fatal(err)
	}
	if tombstone, record := h.rm.Remembers("web"); h.fake.Len() != 0 || tombstone || record || h.status(t, "web") != nil {
		t.Errorf("after the cascade: %d containers, tombstone %v, record %v, status %+v; want all gone",
			h.fake.Len(), tombstone, record, h.status(t, "web"))
	}
}

// Defect 5: deleted and created again while the manager was down, the old
// containers kept running with the old template.
func TestASpecCreatedAgainWhileDownReplacesTheOldContainers(t *testing.T) {
	h := newHarness(t, roles.Options{})
	h.stopBackground()
	h.create(t, newController("web", 2))
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.rm.Run(ctx) }()
	h.waitForNames(t, "web-1", "web-2")
	testpoll.Until(t, waitTimeout, "web's status", func() bool { st := h.status(t, "web"); return st != nil && st.Replicas == 2 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	oldIDs := ids(h.fake.Tasks())

	// while no manager runs, the spec is deleted and created again with
	// another template
	if err := h.store.DeleteController(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	recreated := newController("web", 2)
	recreated.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: "b"}}
	h.create(t, recreated)

	h.rm = h.newNodeManager(t, roles.Options{})
	h.run(t)
	want := api.TemplateHash(&recreated.DesiredState.TaskTemplate)
	// the leader sees the delete and the create apart (the slots are
	// freed, then placed again) or, when its watch brings both before it
	// decides, together: a template change, rolled out one step per
	// monitorSeconds of the new containers' time, which the clock gives
	testpoll.Until(t, waitTimeout, "two containers of the new template", func() bool {
		h.clock.Advance(time.Second)
		tasks := h.fake.Tasks()
		if len(tasks) != 2 {
			return false
		}
		for _, task := range tasks {
			if task.Labels[api.LabelTemplateHash] != want || slices.Contains(oldIDs, task.ID) {
				return false
			}
		}
		return true
	})
}

func ids(tasks []api.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}
