package e2e

// End-to-end tests of updates (docs/CONTRACT.md, Updates): rolling updates
// within their bounds, watched by a sampler that lists the controller's
// containers every 50ms; a crashing template contained and undone; OnDelete;
// dry runs; undo to a revision; rollout status; a kill -9 mid-rollout.

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
	"github.com/replication-manager/replication-manager/registry"
	"github.com/replication-manager/replication-manager/taskcontrol"
)

func TestRollingUpdateByDefaultStaysWithinReplicasAndOneUnavailable(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	newImage := tagImage(t, cli, image, "default")
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("rolldefault")

	rc := controller(id, image, 4, labels)
	rc.DesiredState.MinReadySeconds = 1
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))

	s := startSampler(t, cli, id, bounds{minRunning: 3, maxLive: 4})
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = newImage
	rev := applyRC(t, d, rc)
	took := waitForRollout(t, cli, d, rc, rev)
	s.stop(t)
	t.Logf("4 replicas rolled in %s", took.Round(time.Millisecond))
}

// A change that comes while the old replicas run but are not available
// yet (healthy for less than minReadySeconds) is still bounded by
// maxUnavailable: they serve, so taking them all down at once is an outage.
// Kubernetes bounds its cleanup of unavailable old pods the same way (at
// most all pods - minAvailable - unavailable new ones). Before the fix the
// plan deleted every outdated container that was not available in one
// sync, as one that "takes nothing away": the 4 running replicas went at
// once (a crashing new template then left none running).
func TestRollingUpdateBeforeTheOldReplicasAreAvailableKeepsThemRunning(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("rollearly")

	rc := controller(id, image, 4, labels)
	// 4 s: no health check to pass first (controller), so minReadySeconds
	// alone keeps them not available while the change comes
	rc.DesiredState.MinReadySeconds = 4
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MonitorSeconds: new(4)} // each step waits minReadySeconds only
	applyRC(t, d, rc)
	waitForReplicas(t, cli, id, 4) // running, not yet available

	s := startSampler(t, cli, id, bounds{minRunning: 3, maxLive: 4})
	setMode(rc, "early")
	rev := applyRC(t, d, rc)
	took := waitForRollout(t, cli, d, rc, rev)
	s.stop(t)
	t.Logf("4 replicas rolled in %s", took.Round(time.Millisecond))
}

func TestRollingUpdateWithSurgeKeepsEveryReplicaRunning(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("rollsurge")

	rc := controller(id, image, 4, labels)
	rc.DesiredState.MinReadySeconds = 1
	rc.DesiredState.UpdateStrategy = surgeOne()
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))

	s := startSampler(t, cli, id, bounds{minRunning: 4, maxLive: 5})
	setMode(rc, "surge")
	rev := applyRC(t, d, rc)
	took := waitForRollout(t, cli, d, rc, rev)
	s.stop(t)
	t.Logf("4 replicas rolled in %s", took.Round(time.Millisecond))
	if !s.sawRenamed {
		t.Errorf("no %s-<slot>-old-<id> container seen during a rollout with a surge", id)
	}
}

func TestRolloutOfCrashingTemplateIsContainedThenUndone(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("rollcrash")

	good := controller(id, image, 3, labels)
	good.DesiredState.UpdateStrategy = &api.UpdateStrategy{ProgressDeadlineSeconds: new(10)}
	waitForAvailable(t, cli, d, good, applyRC(t, d, good))
	old := containers(t, cli, id)
	goodHash := api.TemplateHash(&good.DesiredState.TaskTemplate)

	// maxUnavailable 1: one old container may go, the other two must run
	// throughout, with nothing above the 3 replicas
	s := startSampler(t, cli, id, bounds{maxLive: 3, check: oldRunning(goodHash, 2)})
	bad := cloneRC(t, good)
	bad.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = api.Command{"/task", "--no-such-flag"}
	rev := applyRC(t, d, bad)
	st := waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		c := st.FindCondition(api.ConditionProgressing)
		if st.ObservedRevision < rev || c == nil || c.Status != "False" || c.Reason != api.ReasonProgressDeadlineExceeded {
			return fmt.Errorf("status at revision %d (want %d) with Progressing %+v, want False %s",
				st.ObservedRevision, rev, c, api.ReasonProgressDeadlineExceeded)
		}
		return nil
	})
	t.Logf("stalled: %s", st.FindCondition(api.ConditionProgressing).Message)
	kept := keptOf(containers(t, cli, id), old)
	maps.DeleteFunc(kept, func(_ string, c container.Summary) bool { return c.State != api.StateRunning })
	if len(kept) != 2 {
		t.Errorf("%d of the old containers still run after the stall (%v), want 2", len(kept), slices.Sorted(maps.Keys(kept)))
	}

	d.rcctl(t, "", "rollout", "undo", id)
	undone := specOf(t, d, id)
	if got := api.TemplateHash(&undone.Controller.DesiredState.TaskTemplate); got != goodHash {
		t.Fatalf("after rollout undo the spec's template is %s, want the old template %s", got, goodHash)
	}
	// one crashed container may be kept for inspection, renamed out of
	// its slot
	waitForRolloutKeeping(t, cli, d, good, undone.ModRevision, func(name string, c container.Summary) bool {
		return c.State == api.StateExited && strings.HasPrefix(name, id+"-dead-")
	})
	s.stop(t)
	// the old template is the current one again: its survivors stay
	if err := sameContainers(keptOf(containers(t, cli, id), kept), kept); err != nil {
		t.Errorf("old containers that survived the stall, after the undo: %v", err)
	}
}

func TestRolloutOnDeleteLeavesRunningContainersAlone(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("ondelete")

	rc := controller(id, image, 2, labels)
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{Type: api.OnDelete}
	applyRC(t, d, rc)
	before := waitForReplicas(t, cli, id, 2)
	oldHash := api.TemplateHash(&rc.DesiredState.TaskTemplate)

	setMode(rc, "ondelete")
	newHash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	rev := applyRC(t, d, rc)
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.ObservedRevision < rev {
			return fmt.Errorf("status at revision %d, want %d", st.ObservedRevision, rev)
		}
		return nil
	})
	holdFor(t, 3*time.Second, func() error { return sameContainers(containers(t, cli, id), before) })

	victim := before[id+"-1"]
	if err := cli.ContainerRemove(t.Context(), victim.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	var after map[string]container.Summary
	testpoll.Eventually(t, 30*time.Second, func() error {
		after = containers(t, cli, id)
		if c, ok := after[id+"-1"]; !ok || c.ID == victim.ID || c.State != api.StateRunning || len(after) != 2 {
			return fmt.Errorf("%s-1 not replaced yet: %s", id, describeSample(slices.Collect(maps.Values(after))))
		}
		return nil
	})
	if got := after[id+"-1"].Labels[api.LabelTemplateHash]; got != newHash {
		t.Errorf("the replacement of %s-1 has template %s, want the new %s", id, got, newHash)
	}
	if c := after[id+"-2"]; c.ID != before[id+"-2"].ID || c.Labels[api.LabelTemplateHash] != oldHash {
		t.Errorf("%s-2 is %.12s of template %s, want the untouched %.12s of %s",
			id, c.ID, c.Labels[api.LabelTemplateHash], before[id+"-2"].ID, oldHash)
	}
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.UpdatedReplicas != 1 || st.Replicas != 2 {
			return fmt.Errorf("replicas %d, updated %d; want 2 and 1", st.Replicas, st.UpdatedReplicas)
		}
		return nil
	})
}

func TestRolloutDryRunWritesNothing(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	newImage := tagImage(t, cli, image, "dryrun")
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("dryrun")

	rc := controller(id, image, 2, labels)
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))
	before := containers(t, cli, id)
	spec := specOf(t, d, id)
	st := d.status(t, id)

	changed := cloneRC(t, rc)
	changed.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = newImage
	out := d.rcctl(t, mustJSON(t, changed), "apply", "--dry-run", "-f", "-")
	for name := range before {
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
			return strings.Contains(line, name) && strings.Contains(line, "replace")
		}) {
			t.Errorf("apply --dry-run of an image change prints no replace of %s:\n%s", name, out)
		}
	}
	out = d.rcctl(t, "", "scale", id, "--replicas", "3", "--dry-run")
	if !strings.Contains(out, id+"-3") || !strings.Contains(out, "create") {
		t.Errorf("scale --dry-run --replicas 3 prints no create of %s-3:\n%s", id, out)
	}

	holdFor(t, time.Second, func() error { return sameContainers(containers(t, cli, id), before) })
	if after := specOf(t, d, id); after.ModRevision != spec.ModRevision {
		t.Errorf("the spec's ModRevision is %d after the dry runs, was %d", after.ModRevision, spec.ModRevision)
	}
	if after := d.status(t, id); after.ObservedRevision != st.ObservedRevision {
		t.Errorf("the status observed revision %d after the dry runs, %d before", after.ObservedRevision, st.ObservedRevision)
	}
}

func TestRolloutUndoToRevisionConvergesToThatTemplate(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("undoto")

	rc := controller(id, image, 2, labels)
	// both slots at once, so that three rollouts take little time
	rc.DesiredState.UpdateStrategy = &api.UpdateStrategy{MaxSurge: new(intstr.FromInt32(1)), MaxUnavailable: new(intstr.FromInt32(1))}
	revs := map[string]int64{}
	var templates []*api.ReplicationController
	for _, mode := range []string{"a", "b", "c"} {
		setMode(rc, mode)
		rev := applyRC(t, d, rc)
		waitForRollout(t, cli, d, rc, rev)
		revs[mode] = rev
		templates = append(templates, cloneRC(t, rc))
	}
	a := templates[0]
	hashA := api.TemplateHash(&a.DesiredState.TaskTemplate)

	// the history, in etcd and as rcctl lists it
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	recorded, err := registry.NewStore(etcdClient(t, d.etcdURL), "").ListRevisions(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var revA, numA int64
	for _, r := range recorded {
		if r.TemplateHash == hashA {
			revA, numA = r.Revision, r.Number
		}
	}
	if revA != revs["a"] || numA != 1 {
		t.Fatalf("template A recorded at revision %d as number %d, want %d (its spec's) and 1; history %+v", revA, numA, revs["a"], recorded)
	}
	// rcctl lists them by number, 1, 2, 3 as kubectl numbers them
	history := d.rcctl(t, "", "rollout", "history", id)
	for mode, number := range map[string]int{"a": 1, "b": 2, "c": 3} {
		line := lineStarting(history, fmt.Sprint(number))
		if line == "" {
			t.Errorf("rollout history does not list revision %d (template %s):\n%s", number, mode, history)
		}
		if current := strings.HasSuffix(line, "*"); current != (mode == "c") {
			t.Errorf("rollout history marks revision %d (template %s) current: %t, want %t:\n%s", number, mode, current, mode == "c", history)
		}
	}

	d.rcctl(t, "", "rollout", "undo", id, "--to-revision", fmt.Sprint(numA))
	undone := specOf(t, d, id)
	if got := api.TemplateHash(&undone.Controller.DesiredState.TaskTemplate); got != hashA || undone.Controller.DesiredState.Replicas != 2 {
		t.Fatalf("after undo to %d the spec has template %s and %d replicas, want A's %s and 2", revA, got, undone.Controller.DesiredState.Replicas, hashA)
	}
	waitForRollout(t, cli, d, a, undone.ModRevision)
}

func TestRolloutStatusWaitsForTheEnd(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	newImage := tagImage(t, cli, image, "status")
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("rostatus")

	rc := controller(id, image, 2, labels)
	rc.DesiredState.MinReadySeconds = 2
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))

	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image = newImage
	rev := applyRC(t, d, rc)
	// right after the change: the status still says the old rollout is
	// complete, at the old revision
	cmd := d.rcctlCmd(t.Context(), "rollout", "status", id, "--timeout", "60s")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	st := d.status(t, id) // read at once: what the command saw is at most as new
	if err != nil {
		t.Fatalf("rollout status: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("rollout status exited 0 after %s:\n%s", took.Round(time.Millisecond), stdout.String())
	if err := rolloutComplete(st, rev, 2); err != nil {
		t.Errorf("rollout status exited before the rollout completed: %v", err)
	}
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	for name, c := range containers(t, cli, id) {
		if c.Labels[api.LabelTemplateHash] != hash {
			t.Errorf("when rollout status exited, %s still had template %s, want %s", name, c.Labels[api.LabelTemplateHash], hash)
		}
	}
}

func TestRollingUpdateSurvivesKillNine(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	// the restarted manager waits out the killed one's election lease
	lease := []string{"--leader-elect-lease-duration", "2s"}
	d := startDaemon(t, lease...)
	id := newID("rollkill9")

	rc := controller(id, image, 4, labels)
	rc.DesiredState.MinReadySeconds = 2
	rc.DesiredState.UpdateStrategy = surgeOne()
	waitForAvailable(t, cli, d, rc, applyRC(t, d, rc))

	s := startSampler(t, cli, id, bounds{minRunning: 4, maxLive: 5})
	setMode(rc, "kill9")
	newHash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	rev := applyRC(t, d, rc)
	// one slot replaced and the next one's old container renamed out of
	// its slot, waiting for its successor to become available
	testpoll.Eventually(t, 60*time.Second, func() error {
		all := containers(t, cli, id)
		updated, renamed := 0, 0
		for name, c := range all {
			switch {
			case strings.Contains(name, "-old-"):
				renamed++
			case c.Labels[api.LabelTemplateHash] == newHash:
				updated++
			}
		}
		if updated < 2 || renamed == 0 {
			return fmt.Errorf("%d containers of the new template, %d renamed; want 2 and 1", updated, renamed)
		}
		return nil
	})
	d.kill(t)
	t.Logf("killed with %s", describeSample(listAll(t, cli, id)))

	d.start(t, lease...)
	took := waitForRollout(t, cli, d, rc, rev)
	s.stop(t)
	t.Logf("rollout finished %s after the restart", took.Round(time.Millisecond))
}

// waitForAvailable waits until rc's replicas run, named <id>-1 ..
// <id>-replicas, and have been available for minReadySeconds: the steady
// state a rollout starts from.
func waitForAvailable(t *testing.T, cli dockerClient, d *daemon, rc *api.ReplicationController, rev int64) {
	t.Helper()
	waitForReplicas(t, cli, rc.ID, rc.DesiredState.Replicas)
	waitForStatus(t, d, rc.ID, func(st *api.ReplicationControllerStatus) error {
		if st.ObservedRevision < rev || st.AvailableReplicas != rc.DesiredState.Replicas {
			return fmt.Errorf("status at revision %d with %d available, want %d and %d", st.ObservedRevision, st.AvailableReplicas, rev, rc.DesiredState.Replicas)
		}
		return nil
	})
}

// lineStarting returns the first line of out whose first field is field,
// without its trailing spaces, or "".
func lineStarting(out, field string) string {
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == field {
			return strings.TrimRight(line, " \n")
		}
	}
	return ""
}

// bounds are what a sampler checks in every sample of a controller's
// containers: at least minRunning running, at most maxLive live (running
// or created, paused, restarting), and check, when set.
type bounds struct {
	minRunning, maxLive int
	check               func([]container.Summary) error
}

// sampler lists a controller's containers every 50ms from its start until
// stop and checks every sample against its bounds.
type sampler struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu                   sync.Mutex
	samples, errors      int
	fewestRun, mostLive  int
	violation, lastError string
	sawRenamed           bool
}

func startSampler(t *testing.T, cli dockerClient, id string, b bounds) *sampler {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &sampler{cancel: cancel, fewestRun: -1}
	s.wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			list, err := cli.ContainerList(ctx, container.ListOptions{
				All: true, Filters: filters.NewArgs(filters.Arg("label", api.LabelController+"="+id)),
			})
			if ctx.Err() != nil {
				return
			}
			s.record(list, err, b)
			<-tick.C
		}
	})
	return s
}

func (s *sampler) record(list []container.Summary, err error, b bounds) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errors++
		s.lastError = err.Error()
		return
	}
	s.samples++
	run, live := len(running(list, "")), len(liveOf(list))
	if s.fewestRun < 0 || run < s.fewestRun {
		s.fewestRun = run
	}
	s.mostLive = max(s.mostLive, live)
	for _, c := range list {
		if strings.Contains(taskcontrol.SummaryName(c.Names), "-old-") {
			s.sawRenamed = true
		}
	}
	if s.violation != "" {
		return
	}
	var problem string
	switch {
	case run < b.minRunning:
		problem = fmt.Sprintf("%d running, want at least %d", run, b.minRunning)
	case live > b.maxLive:
		problem = fmt.Sprintf("%d live, want at most %d", live, b.maxLive)
	case b.check != nil:
		if err := b.check(list); err != nil {
			problem = err.Error()
		}
	}
	if problem != "" {
		s.violation = fmt.Sprintf("sample %d: %s: %s", s.samples, problem, describeSample(list))
	}
}

// stop ends the sampling and fails the test if a sample broke the bounds,
// or if the samples were too few to say anything.
func (s *sampler) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("sampler: %d samples, fewest running %d, most live %d", s.samples, s.fewestRun, s.mostLive)
	if s.violation != "" {
		t.Errorf("bounds broken: %s", s.violation)
	}
	if s.errors > 0 {
		t.Errorf("sampler: %d container lists failed, the last with %s", s.errors, s.lastError)
	}
	if s.samples < 10 {
		t.Errorf("sampler: only %d samples", s.samples)
	}
}

// oldRunning is a sampler check: at least n containers of the old
// template hash run.
func oldRunning(hash string, n int) func([]container.Summary) error {
	return func(list []container.Summary) error {
		if got := len(running(list, hash)); got < n {
			return fmt.Errorf("%d running containers of the old template, want at least %d", got, n)
		}
		return nil
	}
}

// running returns the running containers of list, of the template hash
// when hash is not empty.
func running(list []container.Summary, hash string) []container.Summary {
	var out []container.Summary
	for _, c := range list {
		if c.State == api.StateRunning && (hash == "" || c.Labels[api.LabelTemplateHash] == hash) {
			out = append(out, c)
		}
	}
	return out
}

// liveOf returns the containers of list that have not ended: running, or
// created and about to, paused or restarting.
func liveOf(list []container.Summary) []container.Summary {
	var out []container.Summary
	for _, c := range list {
		switch c.State {
		case api.StateCreated, api.StateRunning, api.StatePaused, api.StateRestarting:
			out = append(out, c)
		}
	}
	return out
}

// describeSample lists name, state and template of each container, sorted.
func describeSample(list []container.Summary) string {
	parts := make([]string, 0, len(list))
	for _, c := range list {
		parts = append(parts, fmt.Sprintf("%s %s %s", taskcontrol.SummaryName(c.Names), c.State, c.Labels[api.LabelTemplateHash]))
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, ", ") + "]"
}

func listAll(t *testing.T, cli dockerClient, id string) []container.Summary {
	t.Helper()
	return slices.Collect(maps.Values(containers(t, cli, id)))
}

// keptOf returns the containers of got that are, by id, in want.
func keptOf(got, want map[string]container.Summary) map[string]container.Summary {
	out := make(map[string]container.Summary)
	for name, c := range got {
		for _, w := range want {
			if c.ID == w.ID {
				out[name] = c
			}
		}
	}
	return out
}

// waitForRollout waits until the controller runs exactly <id>-1 ..
// <id>-replicas, all of rc's template, and its status, at revision rev or
// later, says the rollout is complete. It returns how long that took.
func waitForRollout(t *testing.T, cli dockerClient, d *daemon, rc *api.ReplicationController, rev int64) time.Duration {
	t.Helper()
	return waitForRolloutKeeping(t, cli, d, rc, rev, nil)
}

// waitForRolloutKeeping is waitForRollout where the containers that kept
// accepts may also be there.
func waitForRolloutKeeping(t *testing.T, cli dockerClient, d *daemon, rc *api.ReplicationController, rev int64, kept func(string, container.Summary) bool) time.Duration {
	t.Helper()
	start := time.Now()
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	n := rc.DesiredState.Replicas
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("%s-%d", rc.ID, i+1)
	}
	slices.Sort(want)
	// two and a half minutes: after a kill -9 mid-create, the restarted
	// manager leaves the created successor its 30 s pendingGrace before it
	// replaces it, and in CI, beside the whole suite, each of the steps
	// after it took 10-20 s (the rollout took 84 s after the restart)
	testpoll.Eventually(t, 150*time.Second, func() error {
		got := containers(t, cli, rc.ID)
		if kept != nil {
			maps.DeleteFunc(got, kept)
		}
		if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, want) {
			return fmt.Errorf("containers %s, want %v of template %s", describeSample(slices.Collect(maps.Values(got))), want, hash)
		}
		for name, c := range got {
			if c.State != api.StateRunning || c.Labels[api.LabelTemplateHash] != hash {
				return fmt.Errorf("%s is %s of template %s, want running of %s", name, c.State, c.Labels[api.LabelTemplateHash], hash)
			}
		}
		return nil
	})
	waitForStatus(t, d, rc.ID, func(st *api.ReplicationControllerStatus) error {
		return rolloutComplete(st, rev, n)
	})
	return time.Since(start)
}

// rolloutComplete says why st is not the status of a completed rollout of
// n replicas of the spec of revision rev (or later).
func rolloutComplete(st *api.ReplicationControllerStatus, rev int64, n int) error {
	c := st.FindCondition(api.ConditionProgressing)
	if st.ObservedRevision < rev || st.UpdatedReplicas != n || st.AvailableReplicas != n ||
		c == nil || c.Status != "True" || c.Reason != api.ReasonRolloutComplete {
		return fmt.Errorf("status at revision %d with %d updated, %d available, Progressing %+v; want revision %d, %d and %d, True %s",
			st.ObservedRevision, st.UpdatedReplicas, st.AvailableReplicas, c, rev, n, n, api.ReasonRolloutComplete)
	}
	return nil
}

// applyRC writes rc with rcctl apply and returns the spec's ModRevision
// after the write.
func applyRC(t *testing.T, d *daemon, rc *api.ReplicationController) int64 {
	t.Helper()
	d.rcctl(t, mustJSON(t, rc), "apply", "-f", "-")
	return specOf(t, d, rc.ID).ModRevision
}

// specOf reads id's spec from the daemon's etcd.
func specOf(t *testing.T, d *daemon, id string) registry.Spec {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	spec, err := registry.NewStore(etcdClient(t, d.etcdURL), "").GetController(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Err != nil {
		t.Fatalf("spec of %s: %v", id, spec.Err)
	}
	return spec
}

// cloneRC returns a deep copy of rc, by its JSON.
func cloneRC(t *testing.T, rc *api.ReplicationController) *api.ReplicationController {
	t.Helper()
	out, err := api.Decode([]byte(mustJSON(t, rc)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setMode changes rc's template: its MODE environment variable.
func setMode(rc *api.ReplicationController, mode string) {
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []api.EnvVar{{Name: "MODE", Value: mode}}
}

// surgeOne is the start-first strategy: one container above replicas,
// none unavailable; a step waits for minReadySeconds, not the default
// monitor window of 5 s.
func surgeOne() *api.UpdateStrategy {
	return &api.UpdateStrategy{MaxSurge: new(intstr.FromInt32(1)), MaxUnavailable: new(intstr.FromInt32(0)), MonitorSeconds: new(1)}
}

// tagImage gives image a second name, unique to the run and to suffix, and
// removes that name when the test ends. Call it before dockertest.Labels,
// so that the name is removed after the test's containers.
func tagImage(t *testing.T, cli dockerClient, src, suffix string) string {
	t.Helper()
	tag := src + "-" + suffix
	if err := cli.ImageTag(t.Context(), src, tag); err != nil {
		t.Fatalf("tag %s as %s: %v", src, tag, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute) // t.Context() ends before cleanups run
		defer cancel()
		if _, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Errorf("remove image %s: %v", tag, err)
		}
	})
	return tag
}

// rcctlCmd is rcctl against the daemon's etcd, not yet started.
func (d *daemon) rcctlCmd(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, filepath.Join(binDir, "rcctl"), append([]string{"--etcd-servers", d.etcdURL}, args...)...)
}
