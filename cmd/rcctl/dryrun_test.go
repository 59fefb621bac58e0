package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/replication-manager/replication-manager/api"
)

// twoNodes registers nodes a (zone=a) and b (zone=b), each under a lease
// of its own, as their managers do; it returns the leases by node.
func twoNodes(t *testing.T, e *testEnv) map[string]clientv3.LeaseID {
	t.Helper()
	leases := map[string]clientv3.LeaseID{}
	for _, name := range []string{"a", "b"} {
		leases[name] = e.grantLease(time.Hour)
		e.registerNode(api.Node{Name: name, Labels: map[string]string{"zone": name}, RegisteredAt: e.now.Add(-time.Hour)}, leases[name])
	}
	return leases
}

// runsOn leaves rc's slots 1..n as a leader and its nodes do once they
// settle: slot i assigned to nodeOf[i-1] with rc's template at the spec's
// revision, and running there for an hour, as that node reports. A node
// without a lease is gone: it has assignments and no report.
func runsOn(t *testing.T, e *testEnv, leases map[string]clientv3.LeaseID, rc *api.ReplicationController, nodeOf ...string) {
	t.Helper()
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	rev := e.get(rc.ID).ModRevision
	reports := map[string]*api.NodeReport{}
	for i, node := range nodeOf {
		slot := i + 1
		value, err := json.Marshal(api.Assignment{Node: node, Revision: rev, TemplateHash: hash})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.client.Put(t.Context(), e.store.AssignmentKey(rc.ID, slot), string(value)); err != nil {
			t.Fatal(err)
		}
		if _, ok := leases[node]; !ok {
			continue
		}
		r := reports[node]
		if r == nil {
			r = &api.NodeReport{Node: node, Status: api.ReplicationControllerStatus{ID: rc.ID}}
			reports[node] = r
		}
		started := e.now.Add(-time.Hour)
		r.Tasks = append(r.Tasks, api.ReportedTask{Name: rc.ID + "-" + strconv.Itoa(slot), ID: rc.ID + "-" + strconv.Itoa(slot) + "-id",
			Slot: slot, Image: "demo-task:latest", State: api.StateRunning, TemplateHash: hash, Created: started, StartedAt: started, Monitored: true})
		r.Slots = append(r.Slots, slot)
		r.Status.Replicas++
	}
	for node, r := range reports {
		if err := e.store.PutReport(t.Context(), r, leases[node], nil); err != nil {
			t.Fatal(err)
		}
	}
}

// runDryRun is runCLI without Docker: a dry run that dials Docker fails
// the test.
func (e *testEnv) runDryRun(args ...string) result {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	c := e.cli(&stdout, &stderr)
	c.dialDocker = func(string) (taskLister, func(), error) {
		e.t.Error("the dry run dialled Docker")
		return nil, nil, errors.New("no Docker here")
	}
	err := c.run(context.Background(), e.args(args))
	return result{stdout.String(), stderr.String(), err}
}

// assertNothingWritten fails when etcd moved past revision before, or a
// key the manager writes (status, events, history) exists.
func assertNothingWritten(t *testing.T, e *testEnv, before int64) {
	t.Helper()
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: the dry run wrote", before, after)
	}
	for _, prefix := range []string{"/registry/status/", "/registry/events/", "/registry/history/"} {
		resp, err := e.client.Get(t.Context(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 0 {
			t.Errorf("%d key(s) under %s after a dry run", resp.Count, prefix)
		}
	}
}

func TestApplyDryRunOfTheSameSpecOverTwoNodesShowsNoChange(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	rc := newController("web", 4)
	e.create(rc)
	runsOn(t, e, leases, rc, "a", "b", "a", "b")
	before := e.revision()

	r := e.runDryRun("apply", "-f", writeFile(t, "web.json", encode(t, rc)), "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" unchanged (dry run)\n"+
		"dry run: no change (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestApplyDryRunOfANewImageReplacesOneContainerAtATimeOnItsNode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	old := newController("web", 4)
	e.create(old)
	runsOn(t, e, leases, old, "a", "b", "a", "b")
	modRev := e.get("web").ModRevision
	before := e.revision()
	updated := withImage(newController("web", 4), "demo-task:2")
	oldHash, newHash := api.TemplateHash(&old.DesiredState.TaskTemplate), api.TemplateHash(&updated.DesiredState.TaskTemplate)

	r := e.runDryRun("apply", "-f", writeFile(t, "web.json", encode(t, updated)), "--dry-run")

	detail := " (template " + oldHash + " → " + newHash + ", stopped first)\n"
	assertStdout(t, r, ""+
		"controller \"web\" configured (dry run)\n"+
		"web-4: would be replaced on b"+detail+
		"web-3: would be replaced on a"+detail+
		"web-2: would be replaced on b"+detail+
		"web-1: would be replaced on a"+detail+
		"image demo-task:2 on a: would be pulled if the node lacks it\n"+
		"image demo-task:2 on b: would be pulled if the node lacks it\n"+
		"dry run: 4 to replace (nothing written)\n")
	assertNothingWritten(t, e, before)
	if got := e.get("web"); got.ModRevision != modRev || got.Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image != "demo-task:latest" {
		t.Errorf("spec at revision %d with image %q, want it untouched", got.ModRevision, got.Controller.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Image)
	}
}

func TestApplyDryRunOfANewControllerSpreadsTheCreatesOverTheNodes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	twoNodes(t, e)
	before := e.revision()

	r := e.runDryRun("apply", "-f", writeFile(t, "web.json", encode(t, newController("web", 3))), "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" created (dry run)\n"+
		"web-1: would be created on a\n"+
		"web-2: would be created on b\n"+
		"web-3: would be created on a\n"+
		"image demo-task:latest on a: would be pulled if the node lacks it\n"+
		"image demo-task:latest on b: would be pulled if the node lacks it\n"+
		"dry run: 3 to create (nothing written)\n")
	assertNothingWritten(t, e, before) // nor the registry id
	assertNotFound(t, e, "web")
}

func TestApplyDryRunOfANewNodeSelectorShowsTheMovesWithTheirNodes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	rc := newController("web", 4)
	e.create(rc)
	runsOn(t, e, leases, rc, "a", "b", "a", "b")
	before := e.revision()
	moved := newController("web", 4)
	moved.DesiredState.NodeSelector = map[string]string{"zone": "b"}

	r := e.runDryRun("apply", "-f", writeFile(t, "web.json", encode(t, moved)), "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" configured (dry run)\n"+
		"web-3: would be moved from a to b (nodeSelector no longer matches node a)\n"+
		"web-1: would be moved from a to b (nodeSelector no longer matches node a)\n"+
		"image demo-task:latest on b: is there (a container of the controller runs it)\n"+
		"dry run: 2 to move (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestApplyDryRunShowsTheContainersNoNodeCanTake(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	twoNodes(t, e)
	before := e.revision()
	rc := newController("web", 3)
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Ports[0].HostPort = 18080

	r := e.runDryRun("apply", "-f", writeFile(t, "web.json", encode(t, rc)), "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" created (dry run)\n"+
		"web-1: would be created on a\n"+
		"web-2: would be created on b\n"+
		"web-3: unschedulable (no node has room (a: host port 18080/TCP is taken; b: host port 18080/TCP is taken))\n"+
		"image demo-task:latest on a: would be pulled if the node lacks it\n"+
		"image demo-task:latest on b: would be pulled if the node lacks it\n"+
		"dry run: 2 to create, 1 unschedulable (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestScaleDryRunShowsTheRemovesAndCreatesWithTheirNodes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		replicas string
		want     string
	}{
		{"down", "3", "" +
			"controller \"web\" scaled to 3 (dry run)\n" +
			"web-5: would be removed from a (scale-down to 3)\n" +
			"web-4: would be removed from b (scale-down to 3)\n" +
			"dry run: 2 to remove (nothing written)\n"},
		{"up", "6", "" +
			"controller \"web\" scaled to 6 (dry run)\n" +
			"web-6: would be created on b\n" +
			"image demo-task:latest on b: is there (a container of the controller runs it)\n" +
			"dry run: 1 to create (nothing written)\n"},
		{"to the same", "5", "" +
			"controller \"web\" scaled to 5 (dry run)\n" +
			"dry run: no change (nothing written)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			leases := twoNodes(t, e)
			rc := newController("web", 5)
			e.create(rc)
			runsOn(t, e, leases, rc, "a", "b", "a", "b", "a")
			before := e.revision()

			r := e.runDryRun("scale", "web", "--replicas", tt.replicas, "--dry-run")

			assertStdout(t, r, tt.want)
			assertNothingWritten(t, e, before)
		})
	}
}

func TestDryRunPlacesTheSlotsOfAGoneNodeOnTheOthers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	rc := newController("web", 3)
	e.create(rc)
	runsOn(t, e, leases, rc, "a", "b", "c") // c is not registered: gone, with its report
	before := e.revision()

	r := e.runDryRun("scale", "web", "--replicas", "3", "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" scaled to 3 (dry run)\n"+
		"web-3: would be created on a (node c is gone)\n"+
		"image demo-task:latest on a: is there (a container of the controller runs it)\n"+
		"dry run: 1 to create (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestDryRunNeedsNoDocker(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	rc := newController("web", 2)
	e.create(rc)
	runsOn(t, e, leases, rc, "a", "b")
	before := e.revision()

	r := e.runDryRun("--docker-host", "unix:///nonexistent/docker.sock", "scale", "web", "--replicas", "3", "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" scaled to 3 (dry run)\n"+
		"web-3: would be created on a\n"+
		"image demo-task:latest on a: is there (a container of the controller runs it)\n"+
		"dry run: 1 to create (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestDryRunRefusesAnInvalidSpecAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.create(newController("web", 3))
	before := e.revision()

	r := e.runDryRun("scale", "web", "--replicas", "-1", "--dry-run")

	assertFails(t, r, "desiredState.replicas: must be between 0 and 1000, got -1", "nothing written")
	assertNothingWritten(t, e, before)
}

func TestDryRunAndWaitDoNotGoTogether(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"apply", "-f", "web.json", "--dry-run", "--wait"},
		{"scale", "web", "--replicas", "2", "--dry-run", "--wait"},
	} {
		r := runOffline(t, args...)
		assertFails(t, r, "--dry-run writes nothing to wait for")
		if got := exitCode(r.err); got != 2 {
			t.Errorf("%q: exit code %d, want 2", args, got)
		}
	}
}

func TestApplyDryRunSaysWhenARolloutWouldStallAndWhy(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lease := e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "a", Capacity: api.NodeCapacity{CPUs: 2}, RegisteredAt: e.now.Add(-time.Hour)}, lease)
	withCPU := func(rc *api.ReplicationController) *api.ReplicationController {
		rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].CPU = 512
		return rc
	}
	old := withCPU(newController("web", 4))
	e.create(old)
	runsOn(t, e, map[string]clientv3.LeaseID{"a": lease}, old, "a", "a", "a", "a")
	before := e.revision()
	updated := withCPU(withImage(newController("web", 5), "demo-task:2"))
	oldHash, newHash := api.TemplateHash(&old.DesiredState.TaskTemplate), api.TemplateHash(&updated.DesiredState.TaskTemplate)

	r := e.runDryRun("apply", "-f", writeFile(t, "web.json", encode(t, updated)), "--dry-run")

	why := "no node has room (a: cpu: needs 512 shares (a reservation: 1024 = one CPU), 0 free of 2048)"
	waits := " (template " + oldHash + " → " + newHash + ")\n"
	assertStdout(t, r, ""+
		"controller \"web\" configured (dry run)\n"+
		"web-5: unschedulable ("+why+")\n"+
		"web-1: would wait to be replaced on a"+waits+
		"web-2: would wait to be replaced on a"+waits+
		"web-3: would wait to be replaced on a"+waits+
		"web-4: would wait to be replaced on a"+waits+
		"rollout would stall: slot web-5 fits no node: "+why+"\n"+
		"dry run: 1 unschedulable, 4 to replace once it is unblocked (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestDryRunOfARolledBackTemplateShowsWhatItRestoresAndNoRollForward(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	old := newController("web", 4)
	oldRev := e.create(old)
	runsOn(t, e, leases, old, "a", "b", "a", "b")
	failed := withImage(newController("web", 4), "demo-task:2")
	e.putRaw("web", encode(t, failed))
	failedRev := e.get("web").ModRevision
	oldHash, failedHash := api.TemplateHash(&old.DesiredState.TaskTemplate), api.TemplateHash(&failed.DesiredState.TaskTemplate)
	e.putStatus(&api.ReplicationControllerStatus{ID: "web", ObservedRevision: failedRev, Rollout: &api.RolloutRecord{
		CompletedRevision: oldRev, CompletedNumber: 1, CompletedHash: oldHash,
		FailedRevision: failedRev, FailedNumber: 2, FailedHash: failedHash, Reason: "1 new container(s) failed", RollbackSince: e.now}})
	before := e.revision()

	r := e.runDryRun("scale", "web", "--replicas", "5", "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" scaled to 5 (dry run)\n"+
		"web-5: would be created on a\n"+
		"rollback: rolled back from revision 2 to revision 1 (template "+oldHash+"); the spec's template is not rolled forward\n"+
		"dry run: 1 to create (nothing written)\n")
	if after := e.revision(); after != before {
		t.Errorf("etcd revision moved from %d to %d: the dry run wrote", before, after)
	}
}
