package agent

import (
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// A report's tasks are told from the next report's by their digest: the
// same tasks in any order, their times in any location, digest the same;
// any field of a task or of a part that changes changes it.
func TestAReportDigestChangesWithWhatTheReportSays(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	web1 := api.ReportedTask{Name: "web-1", ID: "c1", Slot: 1, Image: "web:1", State: api.StateRunning, TemplateHash: "t1", Created: at, StartedAt: at,
		Parts: []api.ReportedPart{{Name: "web-1.log", ID: "p1", Container: "log", Image: "log:1", State: api.StateRunning}}}
	web2 := api.ReportedTask{Name: "web-2", ID: "c2", Slot: 2, Image: "web:1", State: api.StateRunning, TemplateHash: "t1", Created: at}
	base := tasksDigest([]api.ReportedTask{web1, web2})

	inLocal := web1
	inLocal.Created, inLocal.StartedAt = at.In(time.FixedZone("elsewhere", 3600)), at.In(time.FixedZone("elsewhere", 3600))
	if got := tasksDigest([]api.ReportedTask{web2, inLocal}); got != base {
		t.Errorf("the same tasks in another order, their times in another location: digest %x, want %x", got, base)
	}
	if got := activeDigest(nil, nil, 0); got != tasksDigest(nil) {
		t.Errorf("no tasks: %x and %x", got, tasksDigest(nil))
	}

	for name, change := range map[string]func(*api.ReportedTask){
		"state":       func(r *api.ReportedTask) { r.State = api.StateExited },
		"health":      func(r *api.ReportedTask) { r.Health = api.HealthUnhealthy },
		"id":          func(r *api.ReportedTask) { r.ID = "c9" },
		"started":     func(r *api.ReportedTask) { r.StartedAt = at.Add(time.Second) },
		"monitored":   func(r *api.ReportedTask) { r.Monitored = true },
		"repo digest": func(r *api.ReportedTask) { r.RepoDigest = "web@sha256:1" },
		"a part": func(r *api.ReportedTask) {
			r.Parts = []api.ReportedPart{{Name: "web-1.log", ID: "p1", Container: "log", Image: "log:1", State: api.StateExited}}
		},
		"no part": func(r *api.ReportedTask) { r.Parts = nil },
	} {
		changed := web1
		change(&changed)
		if got := tasksDigest([]api.ReportedTask{changed, web2}); got == base {
			t.Errorf("a changed %s leaves the digest as it was", name)
		}
	}
	if got := tasksDigest([]api.ReportedTask{web1}); got == base {
		t.Error("a task fewer leaves the digest as it was")
	}
}
