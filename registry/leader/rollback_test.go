package leader

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
)

// A leader that takes over reads the rollout record from the status
// (readRegistry): while the spec names the template rolled back from, it
// keeps every slot on the restored one, and says so.
func TestALeaderCarriesOnTheRollbackItReadFromTheStatus(t *testing.T) {
	for _, carried := range []bool{true, false} {
		now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
		s := goneLeader(t, &now)
		old, failed := demospec.Controller("web", "demo:1", 2, nil), demospec.Controller("web", "demo:2", 2, nil)
		oldHash, failedHash := api.TemplateHash(&old.DesiredState.TaskTemplate), api.TemplateHash(&failed.DesiredState.TaskTemplate)
		data, err := json.Marshal(failed)
		if err != nil {
			t.Fatal(err)
		}
		s.putSpec(registry.KV{Key: s.store.ControllerKey("web"), Value: data, ModRev: 20, CreateRev: 2})
		s.testPutNode(t, "a")
		var tasks []api.ReportedTask
		for slot := 1; slot <= 2; slot++ {
			s.setAssignment("web", slot, &registry.SlotAssignment{Assignment: api.Assignment{Node: "a", Revision: 10, TemplateHash: oldHash}, Rev: 11})
			tk := task(api.TaskName("web", slot), slot, "demo:1")
			tk.ID, tk.TemplateHash, tk.StartedAt, tk.Monitored = api.TaskName("web", slot), oldHash, now.Add(-time.Hour), true
			tasks = append(tasks, tk)
		}
		s.testPutReport(t, "web", "a", 12, tasks...)
		if carried {
			s.record("web").rollout = api.RolloutRecord{CompletedRevision: 10, CompletedNumber: 1, CompletedHash: oldHash,
				FailedRevision: 20, FailedNumber: 2, FailedHash: failedHash, Reason: "1 new container(s) failed", RollbackSince: now.Add(-time.Minute)}
		}

		op := s.decideController("web")
		if op == nil {
			t.Fatalf("carried %v: no write, want at least the status", carried)
		}
		if !carried {
			if len(op.w.Changes) != 1 || op.w.Changes[0].Next.TemplateHash != failedHash {
				t.Errorf("without the record: changes %+v, want one slot rolled to the spec's template", op.w.Changes)
			}
			continue
		}
		if len(op.w.Changes) != 0 {
			t.Errorf("changes %+v, want none: the failed template is not rolled forward", op.w.Changes)
		}
		st := op.w.Status
		if st == nil || st.Rollout == nil || !st.Rollout.RolledBack || st.Rollout.FailedHash != failedHash {
			t.Fatalf("status %+v, want the rollout record, rolled back from %s", st, failedHash)
		}
		if c := st.FindCondition(api.ConditionProgressing); c == nil || c.Status != "False" || c.Reason != api.ReasonRolledBack {
			t.Errorf("Progressing %+v, want False %s", c, api.ReasonRolledBack)
		}
	}
}
