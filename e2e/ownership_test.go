package e2e

// End-to-end tests of ownership: which keys are controllers, which
// containers are a controller's (the registry id, the controller label,
// the selector), slot names held by containers outside the set, and a spec
// deleted and created again under the same id (docs/CONTRACT.md, etcd layout and Containers).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/etcdtest"
	"github.com/replication-manager/replication-manager/internal/syncbuf"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

// Before the fix, a key such as controllers/a/web was a controller: its
// value's id (web) passed validation against the key's last segment, so its
// 0 replicas were applied to web's containers.
func TestNestedKeyIsNotAController(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("web")
	etcd := etcdClient(t, d.etcdURL)
	store := registry.NewStore(etcd, "")
	ctx := t.Context()

	d.rcctl(t, controllerJSON(t, id, image, 2, labels), "apply", "-f", "-")
	before := waitForReplicas(t, cli, id, 2)
	stBefore := waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 2 {
			return fmt.Errorf("status replicas %d, want 2", st.Replicas)
		}
		return nil
	})

	nested := store.ControllersPrefix() + "a/" + id
	if _, err := etcd.Put(ctx, nested, controllerJSON(t, id, image, 0, labels)); err != nil {
		t.Fatal(err)
	}
	holdFor(t, 3*time.Second, func() error { return sameContainers(containers(t, cli, id), before) })
	testpoll.Eventually(t, 10*time.Second, func() error {
		if n := ignoredWarnings(d.logs, nested); n != 1 {
			return fmt.Errorf("%d warnings naming %s, want 1", n, nested)
		}
		return nil
	})
	st := d.status(t, id)
	if st == nil || st.Replicas != 2 || st.ObservedRevision != stBefore.ObservedRevision {
		t.Errorf("status of %s after the nested key = %+v, want replicas 2 at revision %d", id, st, stBefore.ObservedRevision)
	}
	for _, prefix := range []string{store.StatusPrefix() + "a/", store.Prefix() + "/events/controllers/a/"} {
		resp, err := etcd.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			t.Errorf("the manager wrote %s for the nested key", kv.Key)
		}
	}

	if _, err := etcd.Delete(ctx, nested); err != nil {
		t.Fatal(err)
	}
	holdFor(t, 3*time.Second, func() error { return sameContainers(containers(t, cli, id), before) })
	// a later change of web, seen after the delete, shows that the delete
	// was seen too: web's first two containers are still the same
	d.rcctl(t, "", "scale", id, "--replicas", "3")
	after := waitForReplicas(t, cli, id, 3)
	delete(after, id+"-3")
	if err := sameContainers(after, before); err != nil {
		t.Errorf("after the nested key's delete: %v", err)
	}
	if n := ignoredWarnings(d.logs, nested); n != 1 {
		t.Errorf("%d warnings naming %s, want exactly 1", n, nested)
	}
}

// Before the fix, containers carried no registry label: the second
// registry counted the first's two containers as its own and created none,
// and its delete would have removed them.
func TestTwoRegistriesShareOneDockerHost(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	first := startDaemon(t)
	second := startDaemon(t)
	id := newID("tworeg")
	regFirst, regSecond := registryID(t, first), registryID(t, second)
	if regFirst == regSecond {
		t.Fatalf("both registries have the id %s", regFirst)
	}
	ofFirst := map[string]string{api.LabelController: id, api.LabelRegistry: regFirst}
	ofSecond := map[string]string{api.LabelController: id, api.LabelRegistry: regSecond}

	// readiness decides which replica a scale-down takes (below): the
	// image's health check is off (controller), since under a loaded engine its probe
	// can time out and make a replica not ready for a while
	spec := mustJSON(t, controller(id, image, 2, labels))
	first.rcctl(t, spec, "apply", "-f", "-")
	before := waitForNames(t, cli, ofFirst, id+"-1", id+"-2")
	second.rcctl(t, spec, "apply", "-f", "-")
	waitForNames(t, cli, ofSecond, id+"-3", id+"-4")
	waitForStatus(t, second, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionReplicaFailure)
		names := c != nil && (strings.Contains(c.Message, id+"-1") || strings.Contains(c.Message, id+"-2"))
		if st.Replicas != 2 || c == nil || c.Reason != api.ReasonSlotConflict || !names {
			return fmt.Errorf("second registry: replicas %d, ReplicaFailure %+v; want 2 and SlotConflict naming %s-1 or %s-2", st.Replicas, c, id, id)
		}
		return nil
	})
	if err := sameContainers(labelled(t, cli, ofFirst), before); err != nil {
		t.Errorf("first registry's containers after the second's apply: %v", err)
	}
	if n := len(containers(t, cli, id)); n != 4 {
		t.Errorf("%d containers labelled for %s, want 4 (2 per registry)", n, id)
	}

	second.rcctl(t, "", "delete", id)
	waitForNames(t, cli, ofSecond)
	if err := sameContainers(labelled(t, cli, ofFirst), before); err != nil {
		t.Errorf("first registry's containers after the second's delete: %v", err)
	}

	// a scale-down takes a replica that is not ready first: both are, here,
	// so it takes the highest slot
	waitForStatus(t, first, id, func(st *api.ReplicationControllerStatus) error {
		if st.ReadyReplicas != 2 {
			return fmt.Errorf("first registry: %d ready, want 2", st.ReadyReplicas)
		}
		return nil
	})
	first.rcctl(t, "", "scale", id, "--replicas", "1")
	after := waitForNames(t, cli, ofFirst, id+"-1")
	if after[id+"-1"].ID != before[id+"-1"].ID {
		t.Errorf("%s-1 was replaced on scale-down", id)
	}
	if n := len(containers(t, cli, id)); n != 1 {
		t.Errorf("%d containers labelled for %s after scaling the first to 1, want 1", n, id)
	}
}

// Before the fix, the create of <id>-1 failed on the name conflict forever
// (CreateFailed, backoff), so the controller never had its third replica.
func TestSlotNameHeldByHandStartedContainerIsSkipped(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("slot")
	ctx := t.Context()

	// the run's labels and the controller's selector, but not the
	// replicationController labels
	hand := maps.Clone(labels)
	hand["name"] = id
	created, err := cli.ContainerCreate(ctx, &container.Config{
		Image: image, Cmd: []string{"/task", "--listen", ":8080"}, Labels: hand,
	}, nil, nil, nil, id+"-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	started, err := cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}

	d.rcctl(t, controllerJSON(t, id, image, 3, labels), "apply", "-f", "-")
	waitForNames(t, cli, map[string]string{api.LabelController: id}, id+"-2", id+"-3", id+"-4")
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionReplicaFailure)
		if st.Replicas != 3 || c == nil || c.Reason != api.ReasonSlotConflict || !strings.Contains(c.Message, id+"-1") {
			return fmt.Errorf("replicas %d, ReplicaFailure %+v; want 3 and SlotConflict naming %s-1", st.Replicas, c, id)
		}
		return nil
	})
	now, err := cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		t.Fatalf("the hand-started container is gone: %v", err)
	}
	if !now.State.Running || now.State.StartedAt != started.State.StartedAt || now.Name != "/"+id+"-1" {
		t.Errorf("the hand-started container is %s %s, started %s; want running %s-1, started %s",
			now.Name, now.State.Status, now.State.StartedAt, id, started.State.StartedAt)
	}
}

// Before the fix, the new set's creates asked for <id>-1 and <id>-2, which
// the old set (outside the new selector) holds: name conflicts forever, no
// new replica.
func TestSelectorChangeConvergesToTheNewSet(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("selector")
	withApp := func(app string) string {
		rc := controller(id, image, 2, labels)
		rc.DesiredState.ReplicasInSet = map[string]string{"app": app}
		rc.DesiredState.TaskTemplate.Labels = maps.Clone(labels)
		rc.DesiredState.TaskTemplate.Labels["app"] = app
		return mustJSON(t, rc)
	}
	oldApp, newApp := id+"-old", id+"-new"

	d.rcctl(t, withApp(oldApp), "apply", "-f", "-")
	old := waitForNames(t, cli, map[string]string{api.LabelController: id, "app": oldApp}, id+"-1", id+"-2")
	d.rcctl(t, withApp(newApp), "apply", "-f", "-")
	waitForNames(t, cli, map[string]string{api.LabelController: id, "app": newApp}, id+"-3", id+"-4")
	// outside the selector: left running, untouched
	if err := sameContainers(labelled(t, cli, map[string]string{api.LabelController: id, "app": oldApp}), old); err != nil {
		t.Errorf("the old set after the selector change: %v", err)
	}
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 2 || st.ReadyReplicas != 2 {
			return fmt.Errorf("replicas %d, ready %d; want 2 and 2", st.Replicas, st.ReadyReplicas)
		}
		return nil
	})

	// the cascade goes by the labels alone (the selector is gone with the
	// spec): both sets are the controller's
	d.rcctl(t, "", "delete", id)
	waitForNames(t, cli, map[string]string{api.LabelController: id})
}

// Before the fix, the new spec counted the deleted spec's containers (same
// id, same selector) as its own: template A kept running under spec B.
func TestRecreatedWhileManagerDownRunsOnlyTheNewTemplate(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	// an etcd of the test's, so that specs can be written while the
	// manager is down; it stops after the daemon
	server := etcdtest.Start(t)
	d := &daemon{etcdURL: server.ClientURL, metricsAddr: etcdtest.FreeAddr(t), logs: &syncbuf.Buffer{}}
	d.startShared(t)
	id := newID("recreate")
	etcd := etcdClient(t, d.etcdURL)

	d.rcctl(t, withMode(t, id, image, labels, "a"), "apply", "-f", "-")
	old := waitForReplicas(t, cli, id, 2)
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.Replicas != 2 {
			return fmt.Errorf("status replicas %d, want 2", st.Replicas)
		}
		return nil
	})

	d.stop(t)
	if err := sameContainers(containers(t, cli, id), old); err != nil {
		t.Fatalf("after the manager stopped: %v", err)
	}
	rev := recreate(t, etcd, id, withMode(t, id, image, labels, "b"))

	d.exec(t, []string{"--etcd-servers", d.etcdURL})
	waitForTemplate(t, cli, d, id, image, labels, "b", old, rev)
}

// The same without downtime: the delete and the create are two etcd writes
// back to back, right after a scale-up of the old spec whose sync (a
// create) keeps the controller busy while they arrive, so that its next
// sync sees the new spec and the old spec's containers, not the delete.
// Before the fix that sync counted A's containers as B's. (Without the
// scale-up, a sync usually runs between the two writes and the delete's
// cascade clears A's containers: that passed before the fix too.)
func TestRecreatedBackToBackRunsOnlyTheNewTemplate(t *testing.T) {
	t.Parallel() // a daemon, ids and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("recreate2")
	etcd := etcdClient(t, d.etcdURL)

	d.rcctl(t, withMode(t, id, image, labels, "a"), "apply", "-f", "-")
	old := waitForReplicas(t, cli, id, 2)
	busy := modeController(id, image, labels, "a")
	busy.DesiredState.Replicas = 3
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := etcd.Put(ctx, registry.NewStore(etcd, "").ControllerKey(id), mustJSON(t, busy)); err != nil {
		t.Fatal(err)
	}
	rev := recreate(t, etcd, id, withMode(t, id, image, labels, "b"))
	waitForTemplate(t, cli, d, id, image, labels, "b", old, rev)
	logs := d.logs.String()
	t.Logf("reached by the delete's cascade: %t; by removing the stale spec's containers: %t",
		strings.Contains(logs, "controller deleted: removing"), strings.Contains(logs, "spec created again"))
}

// withMode is the 2-replica demo controller with MODE=mode.
func withMode(t *testing.T, id, image string, labels map[string]string, mode string) string {
	t.Helper()
	return mustJSON(t, modeController(id, image, labels, mode))
}

func modeController(id, image string, labels map[string]string, mode string) *api.ReplicationController {
	rc := controller(id, image, 2, labels)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: mode}}
	return rc
}

// recreate deletes id's spec and puts spec in its place, two writes back
// to back, and returns the revision of the put.
func recreate(t *testing.T, etcd *clientv3.Client, id, spec string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	key := registry.NewStore(etcd, "").ControllerKey(id)
	del, err := etcd.Delete(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if del.Deleted != 1 {
		t.Fatalf("delete %s: %d keys deleted, want 1", key, del.Deleted)
	}
	put, err := etcd.Put(ctx, key, spec)
	if err != nil {
		t.Fatal(err)
	}
	return put.Header.Revision
}

// waitForTemplate waits until id's containers are exactly <id>-1 and
// <id>-2, running, of the MODE=mode template, none of them in old, and the status
// reflects the spec of revision rev.
func waitForTemplate(t *testing.T, cli dockerClient, d *daemon, id, image string, labels map[string]string, mode string, old map[string]container.Summary, rev int64) {
	t.Helper()
	hash := api.TemplateHash(&modeController(id, image, labels, mode).DesiredState.TaskTemplate)
	var got map[string]container.Summary
	testpoll.Eventually(t, 60*time.Second, func() error {
		got = containers(t, cli, id)
		if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, []string{id + "-1", id + "-2"}) {
			return fmt.Errorf("containers %v, want %s-1 and %s-2", names, id, id)
		}
		for name, c := range got {
			for _, o := range old {
				if c.ID == o.ID {
					return fmt.Errorf("%s is still the deleted spec's container %.12s", name, c.ID)
				}
			}
			if c.State != "running" || c.Labels[api.LabelTemplateHash] != hash {
				return fmt.Errorf("%s is %s with template %s, want running with %s", name, c.State, c.Labels[api.LabelTemplateHash], hash)
			}
		}
		return nil
	})
	for name, c := range got {
		inspect, err := cli.ContainerInspect(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(inspect.Config.Env, "MODE="+mode) {
			t.Errorf("%s has env %v, want MODE=%s", name, inspect.Config.Env, mode)
		}
	}
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.ObservedRevision != rev || st.Replicas != 2 {
			return fmt.Errorf("status at revision %d with %d replicas, want %d and 2", st.ObservedRevision, st.Replicas, rev)
		}
		return nil
	})
}

// etcdClient is a client of the etcd at url, closed when the test ends.
func etcdClient(t *testing.T, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// registryID reads the id the daemon's registry stores.
func registryID(t *testing.T, d *daemon) string {
	t.Helper()
	etcd := etcdClient(t, d.etcdURL)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	key := registry.NewStore(etcd, "").RegistryIDKey()
	resp, err := etcd.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || len(resp.Kvs[0].Value) == 0 {
		t.Fatalf("%s: no registry id", key)
	}
	return string(resp.Kvs[0].Value)
}

// waitForStatus waits until id has a status that ok accepts, and returns it.
// It waits up to a minute: a status may wait on a stop and a create, which
// an engine loaded by the whole suite has taken 7 and 17 s for.
func waitForStatus(t *testing.T, d *daemon, id string, ok func(*api.ReplicationControllerStatus) error) *api.ReplicationControllerStatus {
	t.Helper()
	var st *api.ReplicationControllerStatus
	testpoll.Eventually(t, time.Minute, func() error {
		st = d.status(t, id)
		if st == nil {
			return fmt.Errorf("no status of %s yet", id)
		}
		return ok(st)
	})
	return st
}

// labelled returns the containers, in any state, that carry every label of
// match, by name.
func labelled(t *testing.T, cli dockerClient, match map[string]string) map[string]container.Summary {
	t.Helper()
	args := filters.NewArgs()
	for k, v := range match {
		args.Add("label", k+"="+v)
	}
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: args})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	out := make(map[string]container.Summary, len(list))
	for _, c := range list {
		if name := taskcontrol.SummaryName(c.Names); name != "" { // none: being removed
			out[name] = c
		}
	}
	return out
}

// waitForNames waits until the containers carrying match are exactly the
// running containers names (none when names is empty), and returns them.
func waitForNames(t *testing.T, cli dockerClient, match map[string]string, names ...string) map[string]container.Summary {
	t.Helper()
	want := slices.Sorted(slices.Values(names))
	var got map[string]container.Summary
	testpoll.Eventually(t, 90*time.Second, func() error {
		got = labelled(t, cli, match)
		for name, c := range got {
			if c.State != "running" {
				return fmt.Errorf("%s is %s", name, c.State)
			}
		}
		if have := slices.Sorted(maps.Keys(got)); !slices.Equal(have, want) {
			return fmt.Errorf("containers %v with labels %v, want %v", have, match, want)
		}
		return nil
	})
	return got
}

// sameContainers says how got differs from want: other names, other
// container ids, or containers no longer running.
func sameContainers(got, want map[string]container.Summary) error {
	var diffs []string
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			diffs = append(diffs, name+" is gone")
		case g.ID != w.ID:
			diffs = append(diffs, fmt.Sprintf("%s is %.12s, was %.12s", name, g.ID, w.ID))
		case g.State != "running":
			diffs = append(diffs, fmt.Sprintf("%s is %s", name, g.State))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, name+" is new")
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	sort.Strings(diffs)
	return errors.New(strings.Join(diffs, "; "))
}

// errHolding keeps holdFor polling until its window ends.
var errHolding = errors.New("window not over yet")

// holdFor checks cond on dockertest.Eventually's poll for window and fails
// the test at the first error: what must stay true, not become true.
func holdFor(t *testing.T, window time.Duration, cond func() error) {
	t.Helper()
	end := time.Now().Add(window)
	testpoll.Eventually(t, window+30*time.Second, func() error {
		if err := cond(); err != nil {
			t.Fatalf("within %s: %v", window, err)
		}
		if time.Now().Before(end) {
			return errHolding
		}
		return nil
	})
}

// ignoredWarnings counts the log lines that say key is not a controller.
func ignoredWarnings(logs *syncbuf.Buffer, key string) int {
	n := 0
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "is not a controller") && strings.Contains(line, key) {
			n++
		}
	}
	return n
}
