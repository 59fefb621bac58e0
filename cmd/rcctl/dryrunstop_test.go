package main

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
)

func TestScaleDryRunShowsHowTheRemovedContainersStop(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	leases := twoNodes(t, e)
	rc := newController("web", 3)
	grace := 7
	c := &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	c.Name, c.StopSignal, c.StopGracePeriodSeconds, c.PreStop = "task", "SIGINT", &grace, &api.PreStop{SleepSeconds: 2}
	e.create(rc)
	runsOn(t, e, leases, rc, "a", "b", "a")
	before := e.revision()

	r := e.runDryRun("scale", "web", "--replicas", "2", "--dry-run")

	assertStdout(t, r, ""+
		"controller \"web\" scaled to 2 (dry run)\n"+
		"web-3: would be removed from a (scale-down to 2)\n"+
		"stop of task: preStop sleep 2s, then SIGINT, 7s grace in all\n"+
		"dry run: 1 to remove (nothing written)\n")
	assertNothingWritten(t, e, before)
}

func TestDescribeStopNamesTheDefaults(t *testing.T) {
	got := describeStop(api.Container{PreStop: &api.PreStop{Exec: []string{"/drain", "--now"}}})
	want := `preStop exec ["/drain" "--now"], then SIGTERM, the node's --docker-stop-timeout grace in all`
	if got != want {
		t.Errorf("describeStop:\n got %s\nwant %s", got, want)
	}
}
