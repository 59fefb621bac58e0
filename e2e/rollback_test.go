package e2e

// End-to-end test of updateStrategy.failureAction: rollback (issue 28,
// item 4): a template whose containers exit within their monitor window
// fails its rollout, and the leader brings every slot back to the last
// template whose rollout completed, within maxUnavailable, without writing
// the spec; it does not roll the failed template forward again.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/dockertest"
	"github.com/replication-manager/replication-manager/internal/testpoll"
)

func TestACrashingTemplateWithFailureActionRollbackIsRolledBack(t *testing.T) {
	t.Parallel() // a daemon, a controller and labels of its own
	cli := dockertest.Client(t)
	image := dockertest.DemoImage(t)
	labels := dockertest.Labels(t)
	d := startDaemon(t)
	id := newID("rollback")

	good := controller(id, image, 3, labels)
	// a monitor window well past the crash (2 s): the crash must reach the
	// leader within it, through the engine's event, the node and its report,
	// and on two cores busy with make test that took more than the 3 s the
	// default window left (the next step went ahead, and 1 of 3 ran)
	monitor := 15
	good.DesiredState.UpdateStrategy = &api.UpdateStrategy{FailureAction: api.FailureRollback, MonitorSeconds: &monitor}
	waitForAvailable(t, cli, d, good, applyRC(t, d, good))
	goodHash := api.TemplateHash(&good.DesiredState.TaskTemplate)
	// the leader records the rollout complete once every container has
	// run past its monitor window
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if st.Rollout == nil || st.Rollout.CompletedHash != goodHash {
			return fmt.Errorf("rollout record %+v, want %s completed", st.Rollout, goodHash)
		}
		return nil
	})

	// maxUnavailable 1: at least 2 of the 3 run throughout, nothing above 3
	s := startSampler(t, cli, id, bounds{minRunning: 2, maxLive: 3})
	bad := cloneRC(t, good)
	c := &bad.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	c.Command = append(c.Command, "--exit-after", "2s") // within the monitor window
	badHash := api.TemplateHash(&bad.DesiredState.TaskTemplate)
	rev := applyRC(t, d, bad)
	applied := time.Now()

	var restored map[string]string // name → container id
	testpoll.Eventually(t, 90*time.Second, func() error {
		st := d.status(t, id)
		if st == nil {
			return fmt.Errorf("no status")
		}
		if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Status != "False" || c.Reason != api.ReasonRolledBack {
			return fmt.Errorf("Progressing %+v, want False %s", c, api.ReasonRolledBack)
		}
		now := containers(t, cli, id)
		restored = map[string]string{}
		for slot := 1; slot <= 3; slot++ {
			name := fmt.Sprintf("%s-%d", id, slot)
			c, ok := now[name]
			switch {
			case !ok || c.State != api.StateRunning:
				return fmt.Errorf("%s not running", name)
			case c.Labels[api.LabelTemplateHash] != goodHash:
				return fmt.Errorf("%s runs template %s, want the old %s", name, c.Labels[api.LabelTemplateHash], goodHash)
			}
			restored[name] = c.ID
		}
		for name, c := range now {
			if c.State == api.StateRunning && c.Labels[api.LabelTemplateHash] == badHash {
				return fmt.Errorf("%s of the failed template still runs", name)
			}
		}
		return nil
	})
	t.Logf("every slot back on the old template %s after the crashing one was applied", time.Since(applied).Round(time.Second))

	if after := specOf(t, d, id); after.ModRevision != rev {
		t.Errorf("the spec's ModRevision is %d after the rollback, want %d: a rollback does not write the spec", after.ModRevision, rev)
	}
	st := d.status(t, id)
	cond := st.FindCondition(api.ConditionProgressing)
	t.Logf("Progressing: %s", cond.Message)
	if !strings.Contains(cond.Message, "revision 2") || !strings.Contains(cond.Message, "revision 1") {
		t.Errorf("Progressing says %q, want it to name the failed revision 2 and the restored revision 1", cond.Message)
	}
	out, err := d.tryRcctl("", "rollout", "status", id, "--timeout", "10s")
	if err == nil {
		t.Errorf("rollout status exited 0 after a rollback:\n%s", out)
	} else if !strings.Contains(err.Error(), api.ReasonRolledBack) && !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("rollout status failed with %v, want it to say the rollout was rolled back", err)
	}
	if out := d.rcctl(t, "", "get", id); !strings.Contains(out, api.ReasonRolledBack) {
		t.Errorf("rcctl get does not show %s:\n%s", api.ReasonRolledBack, out)
	}
	if out := d.rcctl(t, "", "describe", id); !strings.Contains(out, api.ReasonRolledBack) {
		t.Errorf("rcctl describe does not show %s:\n%s", api.ReasonRolledBack, out)
	}

	// the failed template is not rolled forward again
	time.Sleep(10 * time.Second)
	unchanged := func(when string) {
		t.Helper()
		now := containers(t, cli, id)
		for name, cid := range restored {
			if c, ok := now[name]; !ok || c.ID != cid || c.State != api.StateRunning {
				t.Errorf("%s is %q %s, want its restored container %s running", name, c.State, when, cid[:12])
			}
		}
	}
	unchanged("10 s after the rollback")

	// rollout undo makes the spec agree with what runs: complete, and
	// nothing is replaced
	d.rcctl(t, "", "rollout", "undo", id)
	undone := specOf(t, d, id)
	if got := api.TemplateHash(&undone.Controller.DesiredState.TaskTemplate); got != goodHash {
		t.Fatalf("after rollout undo the spec's template is %s, want the restored %s", got, goodHash)
	}
	waitForStatus(t, d, id, func(st *api.ReplicationControllerStatus) error {
		if c := st.FindCondition(api.ConditionProgressing); st.ObservedRevision < undone.ModRevision || c == nil || c.Reason != api.ReasonRolloutComplete {
			return fmt.Errorf("status at revision %d (want %d) with Progressing %+v, want %s", st.ObservedRevision, undone.ModRevision, c, api.ReasonRolloutComplete)
		}
		return nil
	})
	s.stop(t)
	unchanged("after rollout undo")
}
