package taskcontrol_test

// Integration tests of the containers of one task against the real engine:
// a network joined, ports published by the first container, and labelled
// volumes. Every container and volume carries the test's labels and is
// removed when the test ends, pass or fail.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

// removeVolumesAtEnd removes, when the test ends, its containers and then
// every volume carrying its test label. It runs before the containers'
// cleanup of dockertest.Labels, so it removes the containers first: a
// volume that a container mounts cannot be removed.
func removeVolumesAtEnd(t *testing.T, cli *client.Client, labels map[string]string) {
	t.Helper()
	value := labels[dockertest.TestLabel]
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
		defer cancel()
		if err := dockertest.RemoveContainers(ctx, cli, dockertest.TestLabel, value); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		list, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", dockertest.TestLabel+"="+value))})
		if err != nil {
			t.Errorf("cleanup: list volumes: %v", err)
			return
		}
		for _, v := range list.Volumes {
			if err := cli.VolumeRemove(ctx, v.Name, false); err != nil {
				t.Errorf("cleanup: remove volume %s: %v", v.Name, err)
			}
		}
	})
}

// probedManifest is the demo task with a sidecar that probes it on
// 127.0.0.1 and serves its own /healthz on 9090, which the first container
// publishes on hostPort.
func probedManifest(image string, hostPort int) *api.ContainerManifest {
	return &api.ContainerManifest{Containers: []api.Container{{
		Name:        "web",
		Image:       image,
		Command:     api.Command{"/task", "--listen", ":8080"},
		Ports:       []api.Port{{ContainerPort: 8080}},
		HealthCheck: &api.HealthCheck{Test: api.Command{"NONE"}},
	}, {
		Name:    "prober",
		Image:   image,
		Command: api.Command{"/task", "--listen", ":9090", "--probe", "http://127.0.0.1:8080/healthz", "--probe-interval", "200ms"},
		Ports:   []api.Port{{ContainerPort: 9090, HostPort: hostPort, HostIP: "127.0.0.1"}},
		HealthCheck: &api.HealthCheck{
			Test:     api.Command{"/task", "healthcheck", "http://127.0.0.1:9090/healthz"},
			Interval: api.Duration(500 * time.Millisecond),
		},
	}}}
}

func TestDockerTaskGroupSharesTheFirstsNetwork(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	cli := dockertest.Client(t)
	base := testSpec(t, dockertest.DemoImage(t), 1)
	rc := base.Labels[api.LabelController]
	hostPort := freePort(t)

	specs := api.TaskSpecs(rc, 1, probedManifest(base.Container.Image, hostPort), base.Labels)
	first := createTask(t, d, specs[0])
	side := createTask(t, d, specs[1])
	if side.Name != rc+"-1.prober" || side.JoinedTo != first.ID || first.JoinedTo != "" {
		t.Errorf("sidecar %q joined to %q, first joined to %q; want %s-1.prober joined to %.12s, and none", side.Name, side.JoinedTo, first.JoinedTo, rc, first.ID)
	}
	raw, err := cli.ContainerInspect(t.Context(), side.ID)
	if err != nil {
		t.Fatalf("ContainerInspect: %v", err)
	}
	if got, want := string(raw.HostConfig.NetworkMode), "container:"+first.ID; got != want && got != "container:"+first.Name {
		t.Errorf("sidecar network mode: got %q, want %q", got, want)
	}
	if raw.HostConfig.PortBindings != nil || raw.Config.ExposedPorts != nil {
		t.Errorf("sidecar ports: got %v / %v, want none (the first publishes them)", raw.HostConfig.PortBindings, raw.Config.ExposedPorts)
	}

	// The sidecar's health is its probe of 127.0.0.1:8080, which only the
	// first container serves: healthy means it reached it.
	waitListed(t, d, map[string]string{api.LabelController: rc, api.LabelContainer: "prober"}, side.ID, func(task api.Task) error {
		if !task.Ready() || task.JoinedTo != first.ID {
			return fmt.Errorf("sidecar listed as %s/%q joined to %.12s, want ready, joined to %.12s", task.State, task.Health, task.JoinedTo, first.ID)
		}
		return nil
	})
	// The sidecar's own port is reached through the first container's
	// published port.
	testpoll.Eventually(t, waitTimeout, func() error {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(hostPort) + "/healthz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET the sidecar through the first's port: %s %q", resp.Status, body)
		}
		return nil
	})

	// The first container gone, a new sidecar cannot join it.
	if err := d.DeleteTask(t.Context(), first.ID); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	again := specs[1]
	again.Name += "-2"
	_, err = d.CreateTask(t.Context(), again)
	if !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("join of a removed container: got %v, want ErrTaskNotFound", err)
	}
	if _, err := d.InspectTask(t.Context(), again.Name); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("after the failed join: inspect %s got %v, want it gone", again.Name, err)
	}
}

func TestDockerJoinOfAStoppedContainerFails(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	base := testSpec(t, dockertest.DemoImage(t), 1)
	base.Container.Command = api.Command{"/task", "--exit-after", "10ms"}
	first := createTask(t, d, base)
	testpoll.Eventually(t, waitTimeout, func() error {
		task, err := d.InspectTask(t.Context(), first.ID)
		if err != nil {
			return err
		}
		if task.State != api.StateExited {
			return fmt.Errorf("first is %s, want exited", task.State)
		}
		return nil
	})
	side := base
	side.Name = base.Name + ".prober"
	side.JoinNetwork = base.Name
	side.Container.Command = api.Command{"/task", "--listen", ":9090"}
	_, err := d.CreateTask(t.Context(), side)
	if !errors.Is(err, api.ErrJoinTargetNotRunning) {
		t.Errorf("join of an exited container: got %v, want ErrJoinTargetNotRunning", err)
	}
	if _, err := d.InspectTask(t.Context(), side.Name); !errors.Is(err, api.ErrTaskNotFound) {
		t.Errorf("after the failed join: inspect %s got %v, want it gone", side.Name, err)
	}

	withPorts := side
	withPorts.Container.Ports = []api.Port{{ContainerPort: 9090}}
	if _, err := d.CreateTask(t.Context(), withPorts); err == nil {
		t.Error("join with ports: got nil, want a refusal")
	}
}

func TestDockerVolumes(t *testing.T) {
	t.Parallel()
	d := newDocker(t)
	cli := dockertest.Client(t)
	base := testSpec(t, dockertest.DemoImage(t), 1)
	base.Labels[api.LabelRegistry] = "mine"
	removeVolumesAtEnd(t, cli, base.Labels)
	ctx := t.Context()
	rc := base.Labels[api.LabelController]
	ours := map[string]string{api.LabelController: rc, api.LabelRegistry: "mine", dockertest.TestLabel: base.Labels[dockertest.TestLabel]}

	name := api.EmptyDirVolumeName(rc, 1, "scratch")
	created, err := d.CreateVolume(ctx, api.VolumeSpec{Name: name, Labels: base.Labels})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	if created.Name != name || !reflect.DeepEqual(created.Labels, base.Labels) || created.Created.IsZero() {
		t.Errorf("CreateVolume: got %+v, want %s with the spec's labels and a creation time", created, name)
	}
	if _, err := d.CreateVolume(ctx, api.VolumeSpec{Name: name, Labels: base.Labels}); err != nil {
		t.Errorf("CreateVolume again with the same labels: %v", err)
	}

	// Another registry's volume, still the test's, for the cleanup.
	theirs := api.EmptyDirVolumeName(rc, 2, "scratch")
	theirLabels := map[string]string{dockertest.RunLabel: dockertest.RunID(), dockertest.TestLabel: base.Labels[dockertest.TestLabel],
		api.LabelController: rc, api.LabelRegistry: "someone-else"}
	if _, err := d.CreateVolume(ctx, api.VolumeSpec{Name: theirs, Labels: theirLabels}); err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	if _, err := d.CreateVolume(ctx, api.VolumeSpec{Name: theirs, Labels: base.Labels}); !errors.Is(err, api.ErrVolumeNameConflict) {
		t.Errorf("CreateVolume of a name taken by another's: got %v, want ErrVolumeNameConflict", err)
	}
	if err := d.RemoveVolume(ctx, theirs, ours); !errors.Is(err, api.ErrVolumeNotOwned) {
		t.Errorf("RemoveVolume of another registry's: got %v, want ErrVolumeNotOwned", err)
	}
	if err := d.RemoveVolume(ctx, theirs, nil); err == nil {
		t.Error("RemoveVolume without a selector: got nil, want a refusal")
	}
	if _, err := cli.VolumeInspect(ctx, theirs); err != nil {
		t.Errorf("another registry's volume after the refusals: %v, want it kept", err)
	}

	// A container mounting it, read-write, and a volume made by the mount.
	made := api.EmptyDirVolumeName(rc, 1, "made")
	withMounts := base
	withMounts.Mounts = []api.Mount{
		{Type: api.MountVolume, Source: name, Target: "/scratch"},
		{Type: api.MountVolume, Source: made, Target: "/made", ReadOnly: true, VolumeLabels: base.Labels},
	}
	task := createTask(t, d, withMounts)
	raw, err := cli.ContainerInspect(ctx, task.ID)
	if err != nil {
		t.Fatalf("ContainerInspect: %v", err)
	}
	var mounts []string
	for _, m := range raw.Mounts {
		mounts = append(mounts, fmt.Sprintf("%s %s %s rw=%v", m.Type, m.Name, m.Destination, m.RW))
	}
	slices.Sort(mounts)
	want := []string{fmt.Sprintf("%s %s /made rw=false", mount.TypeVolume, made), fmt.Sprintf("%s %s /scratch rw=true", mount.TypeVolume, name)}
	if !slices.Equal(mounts, want) {
		t.Errorf("mounts:\n got %q\nwant %q", mounts, want)
	}
	list, err := d.ListVolumes(ctx, ours)
	if err != nil {
		t.Fatalf("ListVolumes: %v", err)
	}
	var names []string
	for _, v := range list {
		names = append(names, v.Name)
		if !reflect.DeepEqual(v.Labels, base.Labels) {
			t.Errorf("volume %s: labels %v, want %v", v.Name, v.Labels, base.Labels)
		}
	}
	slices.Sort(names)
	if want := []string{made, name}; !slices.Equal(names, want) {
		t.Errorf("ListVolumes(ours): got %q, want %q (not the other registry's)", names, want)
	}

	if err := d.RemoveVolume(ctx, name, ours); !errors.Is(err, api.ErrVolumeInUse) {
		t.Errorf("RemoveVolume of a mounted volume: got %v, want ErrVolumeInUse", err)
	}
	if err := d.DeleteTask(ctx, task.ID); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	for _, n := range []string{name, made} {
		if err := d.RemoveVolume(ctx, n, ours); err != nil {
			t.Errorf("RemoveVolume(%s): %v", n, err)
		}
		if _, err := cli.VolumeInspect(ctx, n); err == nil {
			t.Errorf("volume %s still there after RemoveVolume", n)
		}
		if err := d.RemoveVolume(ctx, n, ours); err != nil {
			t.Errorf("RemoveVolume of %s, gone: got %v, want nil", n, err)
		}
	}
}
