package roles

import (
	"errors"
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestBareTasksBehavesLikeATaskControl(t *testing.T) {
	ctx := t.Context()
	b := newBareTasks()
	spec := func(name, slot string) api.TaskSpec {
		return api.TaskSpec{Name: name, Labels: map[string]string{"name": "web", api.LabelController: "web", api.LabelSlot: slot}}
	}
	one, err := b.CreateTask(ctx, spec("web-1", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateTask(ctx, spec("web-2", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateTask(ctx, spec("web-1", "1")); !errors.Is(err, api.ErrTaskNameConflict) {
		t.Errorf("second web-1: err = %v, want a name conflict", err)
	}

	list, err := b.ListTasks(ctx, map[string]string{api.LabelController: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "web-1" || list[1].Labels[api.LabelSlot] != "2" || list[0].State != api.StateRunning {
		t.Fatalf("list = %+v, want web-1 and web-2 (slot 2), running", list)
	}
	list[0].Labels["name"] = "changed" // a caller's copy: the store is not touched
	if got, _ := b.InspectTask(ctx, one.ID); got.Labels["name"] != "web" {
		t.Errorf("labels changed through a listed task: %v", got.Labels)
	}
	if other, _ := b.ListTasks(ctx, map[string]string{"name": "db"}); len(other) != 0 {
		t.Errorf("selector name=db listed %d tasks", len(other))
	}
	if all, _ := b.ListTasks(ctx, nil); len(all) != 2 {
		t.Errorf("no selector listed %d tasks, want every one (2)", len(all))
	}

	if err := b.RenameTask(ctx, one.ID, "web-2"); !errors.Is(err, api.ErrTaskNameConflict) {
		t.Errorf("rename onto web-2: err = %v, want a name conflict", err)
	}
	if err := b.RenameTask(ctx, one.ID, "web-dead"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTask(ctx, one.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTask(ctx, one.ID); err != nil {
		t.Errorf("delete of a gone container: %v", err)
	}
	if _, err := b.InspectTask(ctx, one.ID); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("inspect of a deleted container: err = %v, want not found", err)
	}
	if b.Len() != 1 {
		t.Errorf("Len = %d, want 1", b.Len())
	}
}
