package taskcontrol_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// groupTaskControl is what tasks of several containers add to the task
// control: the methods that registry.TaskControlInterface is to gain. Both
// implementations have them.
type groupTaskControl interface {
	CreateVolume(ctx context.Context, spec api.VolumeSpec) (api.NamedVolume, error)
	ListVolumes(ctx context.Context, selector map[string]string) ([]api.NamedVolume, error)
	RemoveVolume(ctx context.Context, name string, selector map[string]string) error
}

var (
	_ groupTaskControl = (*taskcontrol.Docker)(nil)
	_ groupTaskControl = (*taskcontrol.Fake)(nil)
)

// sidecarSpec is a container of the task in rc's slot that joins the
// network of the slot's first container.
func sidecarSpec(rc string, slot int, name string) api.TaskSpec {
	s := spec(rc, slot)
	s.Name = api.SidecarName(rc, slot, name)
	s.Labels[api.LabelContainer] = name
	s.JoinNetwork = api.TaskName(rc, slot)
	return s
}

func TestFakeJoinsANetwork(t *testing.T) {
	f := newFake()
	first := mustCreate(t, f, spec("web", 1))
	side := mustCreate(t, f, sidecarSpec("web", 1, "prober"))
	if side.JoinedTo != first.ID || first.JoinedTo != "" {
		t.Errorf("JoinedTo: sidecar %q, first %q; want the first's id and none", side.JoinedTo, first.JoinedTo)
	}
	got, err := f.InspectTask(t.Context(), side.ID)
	if err != nil || got.JoinedTo != first.ID {
		t.Errorf("InspectTask of the sidecar: JoinedTo %q (%v), want %q", got.JoinedTo, err, first.ID)
	}
	listed, _ := f.ListTasks(t.Context(), map[string]string{api.LabelContainer: "prober"})
	if len(listed) != 1 || listed[0].JoinedTo != first.ID {
		t.Errorf("ListTasks of the sidecar: got %+v, want it joined to %.12s", listed, first.ID)
	}
	// By id as well as by name, as Docker's container:<name|id>.
	byID := sidecarSpec("web", 1, "shipper")
	byID.JoinNetwork = first.ID
	if task := mustCreate(t, f, byID); task.JoinedTo != first.ID {
		t.Errorf("join by id: JoinedTo %q, want %q", task.JoinedTo, first.ID)
	}
}

func TestFakeRefusesAJoinLikeDocker(t *testing.T) {
	f := newFake()
	_, err := f.CreateTask(t.Context(), sidecarSpec("web", 1, "prober"))
	if !errors.Is(err, api.ErrTaskNotFound) || !strings.Contains(err.Error(), "web-1") {
		t.Errorf("join of a missing container: got %v, want ErrTaskNotFound naming web-1", err)
	}
	first := mustCreate(t, f, spec("web", 1))
	f.SetState(first.ID, api.StateExited, 3)
	if _, err := f.CreateTask(t.Context(), sidecarSpec("web", 1, "prober")); !errors.Is(err, api.ErrJoinTargetNotRunning) {
		t.Errorf("join of an exited container: got %v, want ErrJoinTargetNotRunning", err)
	}
	f.SetState(first.ID, api.StateRunning, 0)

	withPorts := sidecarSpec("web", 1, "prober")
	withPorts.Container.Ports = []api.Port{{ContainerPort: 9090}}
	if _, err := f.CreateTask(t.Context(), withPorts); err == nil || !strings.Contains(err.Error(), "publish them on web-1") {
		t.Errorf("join with ports: got %v, want a refusal saying to publish them on web-1", err)
	}
	withHost := sidecarSpec("web", 1, "prober")
	withHost.Container.HostNetwork = true
	if _, err := f.CreateTask(t.Context(), withHost); err == nil || !strings.Contains(err.Error(), "host's network") {
		t.Errorf("join with hostNetwork: got %v, want a refusal", err)
	}
	if got := names(f.Tasks()); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("after the failed creates: containers %q, want only web-1", got)
	}
}

func TestFakeMountsCreateMissingVolumes(t *testing.T) {
	f := newFake()
	labels := map[string]string{api.LabelController: "web", api.LabelSlot: "1"}
	s := spec("web", 1)
	s.Mounts = []api.Mount{
		{Type: api.MountVolume, Source: "web-1.scratch", Target: "/scratch", VolumeLabels: labels},
		{Type: api.MountBind, Source: "/srv", Target: "/srv", ReadOnly: true},
	}
	task := mustCreate(t, f, s)
	vols := f.Volumes()
	if len(vols) != 1 || vols[0].Name != "web-1.scratch" || !reflect.DeepEqual(vols[0].Labels, labels) || !vols[0].Created.Equal(epoch) {
		t.Errorf("volumes after the create: got %+v, want web-1.scratch with the mount's labels", vols)
	}
	if got := f.Mounts(task.ID); !slices.Equal(got, []string{"web-1.scratch"}) {
		t.Errorf("Mounts: got %q, want the named volume only", got)
	}

	bad := spec("web", 2)
	bad.Mounts = []api.Mount{{Type: "tmpfs", Target: "/tmp"}}
	if _, err := f.CreateTask(t.Context(), bad); err == nil || !strings.Contains(err.Error(), `unknown type "tmpfs"`) {
		t.Errorf("a mount of an unknown type: got %v, want a refusal", err)
	}
}

func TestFakeVolumes(t *testing.T) {
	f := newFake()
	ctx := t.Context()
	ours := map[string]string{api.LabelController: "web", api.LabelRegistry: "r1"}
	mine := api.VolumeSpec{Name: "web-1.scratch", Labels: map[string]string{api.LabelController: "web", api.LabelRegistry: "r1", api.LabelSlot: "1"}}

	v, err := f.CreateVolume(ctx, mine)
	if err != nil || v.Name != mine.Name || !reflect.DeepEqual(v.Labels, mine.Labels) {
		t.Fatalf("CreateVolume: got %+v, %v", v, err)
	}
	v.Labels["x"] = "y" // the caller's copy
	if again, err := f.CreateVolume(ctx, mine); err != nil || !reflect.DeepEqual(again.Labels, mine.Labels) {
		t.Errorf("CreateVolume again: got %+v, %v; want the volume as it is", again, err)
	}
	theirs := api.VolumeSpec{Name: "web-2.scratch", Labels: map[string]string{api.LabelController: "web", api.LabelRegistry: "r2"}}
	if err := f.AddVolume(theirs); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateVolume(ctx, api.VolumeSpec{Name: theirs.Name, Labels: mine.Labels}); !errors.Is(err, api.ErrVolumeNameConflict) {
		t.Errorf("CreateVolume of another registry's name: got %v, want ErrVolumeNameConflict", err)
	}

	list, err := f.ListVolumes(ctx, ours)
	if err != nil || len(list) != 1 || list[0].Name != mine.Name {
		t.Errorf("ListVolumes(ours): got %+v, %v; want only %s", list, err, mine.Name)
	}
	list, _ = f.ListVolumes(ctx, map[string]string{api.LabelController: api.AnyLabelValue})
	if len(list) != 2 || list[0].Name != "web-1.scratch" || list[1].Name != "web-2.scratch" {
		t.Errorf("ListVolumes(any controller): got %+v, want both, sorted", list)
	}

	if err := f.RemoveVolume(ctx, theirs.Name, ours); !errors.Is(err, api.ErrVolumeNotOwned) {
		t.Errorf("RemoveVolume of another registry's: got %v, want ErrVolumeNotOwned", err)
	}
	if err := f.RemoveVolume(ctx, theirs.Name, nil); err == nil {
		t.Error("RemoveVolume without a selector: got nil, want a refusal")
	}

	s := spec("web", 1)
	s.Mounts = []api.Mount{{Type: api.MountVolume, Source: mine.Name, Target: "/scratch"}}
	task := mustCreate(t, f, s)
	f.SetState(task.ID, api.StateExited, 0) // a stopped container still holds it
	if err := f.RemoveVolume(ctx, mine.Name, ours); !errors.Is(err, api.ErrVolumeInUse) || !strings.Contains(err.Error(), "web-1") {
		t.Errorf("RemoveVolume of a mounted volume: got %v, want ErrVolumeInUse naming web-1", err)
	}
	if err := f.DeleteTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveVolume(ctx, mine.Name, ours); err != nil {
		t.Errorf("RemoveVolume: %v", err)
	}
	if err := f.RemoveVolume(ctx, mine.Name, ours); err != nil {
		t.Errorf("RemoveVolume of a volume that is gone: got %v, want nil", err)
	}
	if got := f.Volumes(); len(got) != 1 || got[0].Name != theirs.Name {
		t.Errorf("volumes left: got %+v, want only %s", got, theirs.Name)
	}

	wantCalls := []string{"volume-create web-1.scratch", "volume-create web-1.scratch", "volume-create web-2.scratch",
		"volume-list", "volume-list", "volume-remove web-2.scratch", "volume-remove web-2.scratch",
		"create web-1", "volume-remove web-1.scratch", "delete " + task.ID, "volume-remove web-1.scratch", "volume-remove web-1.scratch"}
	if got := f.Calls(); !slices.Equal(got, wantCalls) {
		t.Errorf("calls:\n got %q\nwant %q", got, wantCalls)
	}
	if c := f.Counts(); c.VolumeCreate != 3 || c.VolumeList != 2 || c.VolumeRemove != 5 {
		t.Errorf("counts: got %+v", c)
	}
}

func TestFakeVolumeErrorInjection(t *testing.T) {
	boom := errors.New("boom")
	f := newFake()
	f.CreateVolumeErr = func(api.VolumeSpec) error { return boom }
	f.ListVolumesErr = func() error { return boom }
	f.RemoveVolumeErr = func(string) error { return boom }
	sel := map[string]string{api.LabelController: "web"}
	if _, err := f.CreateVolume(t.Context(), api.VolumeSpec{Name: "v", Labels: sel}); !errors.Is(err, boom) {
		t.Errorf("CreateVolume: got %v, want boom", err)
	}
	if len(f.Volumes()) != 0 {
		t.Error("a failed CreateVolume made a volume")
	}
	if _, err := f.ListVolumes(t.Context(), sel); !errors.Is(err, boom) {
		t.Errorf("ListVolumes: got %v, want boom", err)
	}
	if err := f.AddVolume(api.VolumeSpec{Name: "v", Labels: sel}); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveVolume(t.Context(), "v", sel); !errors.Is(err, boom) || len(f.Volumes()) != 1 {
		t.Errorf("RemoveVolume: got %v with %d volumes left, want boom and the volume kept", err, len(f.Volumes()))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f.RemoveVolumeErr = nil
	if err := f.RemoveVolume(ctx, "v", sel); !errors.Is(err, context.Canceled) {
		t.Errorf("RemoveVolume with a cancelled context: got %v", err)
	}
}
