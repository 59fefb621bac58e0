package nodemodel

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// running is web's container in slot, of template hash, ready and up
// for an hour.
func running(slot int, hash string) Container {
	return Container{Name: api.TaskName("web", slot), ID: "c" + strconv.Itoa(slot), Slot: slot, Hash: hash, Ready: true, Since: now.Add(-time.Hour), Monitored: true}
}

// renamedOut is slot's container of template hash renamed out of the
// slot's name for a successor started first.
func renamedOut(slot int, hash string) Container {
	c := running(slot, hash)
	c.Name, c.ID = c.Name+"-old-"+c.ID, c.ID+"-old"
	return c
}

// assigned assigns slots to the node, each running template hash.
func assigned(hash string, slots ...int) registry.SlotAssignments {
	var out registry.SlotAssignments
	for _, slot := range slots {
		out = out.With(slot, registry.SlotAssignment{Assignment: api.Assignment{Node: "a", Revision: 10, TemplateHash: hash}, Rev: 20})
	}
	return out
}

// with returns as with slot's assignment changed by fn.
func with(as registry.SlotAssignments, slot int, fn func(*api.Assignment)) registry.SlotAssignments {
	a, _ := as.Get(slot)
	fn(&a.Assignment)
	return as.With(slot, a)
}

// acts renders what r has the node do, one line an action, as people say it.
func acts(in Input, r Result) []string {
	out := []string{}
	for _, i := range r.Remove {
		out = append(out, "remove "+in.Containers[i].Name)
	}
	for _, rep := range r.Replace {
		how := "stop first"
		switch {
		case rep.Unhealthy:
			how = "unhealthy"
		case rep.StartFirst:
			how = "start first"
		}
		out = append(out, "replace "+in.Containers[rep.Container].Name+" with "+rep.Hash+", "+how)
	}
	for _, i := range r.Retire {
		out = append(out, "retire "+in.Containers[i].Name)
	}
	for _, slot := range r.Create {
		out = append(out, "create "+api.TaskName("web", slot))
	}
	if r.More {
		out = append(out, "more")
	}
	if r.MoreCreates {
		out = append(out, "more creates")
	}
	if r.RecheckAfter > 0 {
		out = append(out, "look again in "+r.RecheckAfter.String())
	}
	return out
}

func TestANodeRunsExactlyItsAssignedSlots(t *testing.T) {
	tests := []struct {
		name       string
		assigned   registry.SlotAssignments
		containers []Container
		removing   []Container
		blocked    []int
		burst      int // 0: 50
		window     time.Duration
		want       []string
	}{
		{
			name:     "it creates the assigned slots it has no container of, lowest first",
			assigned: assigned("v2", 3, 1, 2), containers: []Container{running(2, "v2")},
			want: []string{"create web-1", "create web-3"},
		},
		{
			name:     "it keeps a container of the assigned template",
			assigned: assigned("v2", 1), containers: []Container{running(1, "v2")},
			want: []string{},
		},
		{
			name:     "it removes its containers of every slot not assigned to it, whichever they are",
			assigned: assigned("v2", 2), containers: []Container{running(1, "v2"), running(2, "v2"), running(3, "v1")},
			want: []string{"remove web-1", "remove web-3"},
		},
		{
			name:     "it removes a burst of them in name order and leaves the rest for the next pass",
			assigned: assigned("v2"), containers: []Container{running(3, "v2"), running(10, "v2"), running(1, "v2")},
			burst: 2, want: []string{"remove web-1", "remove web-10", "more"},
		},
		{
			name:     "it replaces a container of another template, stop first",
			assigned: assigned("v2", 1), containers: []Container{running(1, "v1")},
			want: []string{"replace web-1 with v2, stop first", "create web-1"},
		},
		{
			name:     "it starts the successor first when the assignment says so",
			assigned: with(assigned("v2", 1), 1, func(a *api.Assignment) { a.StartFirst = true }), containers: []Container{running(1, "v1")},
			want: []string{"replace web-1 with v2, start first", "create web-1"},
		},
		{
			name:       "a successor that never took over stops first when the slot's template changes again: the slot runs at most two containers",
			assigned:   with(assigned("v3", 1), 1, func(a *api.Assignment) { a.StartFirst = true }),
			containers: []Container{renamedOut(1, "v1"), func() Container { c := running(1, "v2"); c.Ready = false; return c }()},
			want:       []string{"replace web-1 with v3, stop first", "create web-1"},
		},
		{
			name:     "under OnDelete it keeps a running container of another template",
			assigned: with(assigned("v2", 1), 1, func(a *api.Assignment) { a.OnDelete = true }), containers: []Container{running(1, "v1")},
			want: []string{},
		},
		{
			name:       "under an assignment written before assignments carried a template it keeps whatever runs, and creates the spec's",
			assigned:   with(with(assigned("", 1, 2), 1, func(a *api.Assignment) { a.Revision = 0 }), 2, func(a *api.Assignment) { a.Revision = 0 }),
			containers: []Container{running(1, "v1")},
			want:       []string{"create web-2"},
		},
		{
			name:     "it replaces the container the leader names unhealthy, whatever its template, and no other",
			assigned: with(assigned("v2", 1, 2), 1, func(a *api.Assignment) { a.Replace = "c1" }), containers: []Container{running(1, "v2"), running(2, "v2")},
			want: []string{"replace web-1 with v2, unhealthy", "create web-1"},
		},
		{
			name:     "the burst caps the replacements, and a slot it holds back keeps its container",
			assigned: assigned("v2", 1, 2, 3), containers: []Container{running(1, "v1"), running(2, "v1"), running(3, "v1")},
			burst: 2, want: []string{"replace web-1 with v2, stop first", "replace web-2 with v2, stop first", "create web-1", "create web-2", "more"},
		},
		{
			name:     "the burst caps the creates",
			assigned: assigned("v2", 1, 2, 3), burst: 2,
			want: []string{"create web-1", "create web-2", "more creates"},
		},
		{
			name:     "it does not create a slot whose name a container outside the set holds",
			assigned: assigned("v2", 1, 2), blocked: []int{1},
			want: []string{"create web-2"},
		},
		{
			name:     "it does not create a slot whose name a container the engine is removing still holds, and looks again",
			assigned: assigned("v2", 1), removing: []Container{running(1, "v1")},
			want: []string{"look again in 1s"},
		},
		{
			name:     "a container renamed out for its successor stays until the successor is available",
			assigned: with(assigned("v2", 1), 1, func(a *api.Assignment) { a.StartFirst = true }),
			containers: []Container{renamedOut(1, "v1"), func() Container {
				c := running(1, "v2")
				c.Since = now.Add(-4 * time.Second)
				return c
			}()},
			window: 10 * time.Second, want: []string{"look again in 6s"},
		},
		{
			name:       "a container renamed out for its successor goes once the successor is available",
			assigned:   with(assigned("v2", 1), 1, func(a *api.Assignment) { a.StartFirst = true }),
			containers: []Container{renamedOut(1, "v1"), running(1, "v2")}, window: 10 * time.Second,
			want: []string{"retire web-1-old-c1"},
		},
		{
			name:     "a successor past its window stays unproven until the engine says it still runs",
			assigned: with(assigned("v2", 1), 1, func(a *api.Assignment) { a.StartFirst = true }),
			containers: []Container{renamedOut(1, "v1"), func() Container {
				c := running(1, "v2")
				c.Monitored = false // the node has not asked its engine yet
				return c
			}()},
			window: 10 * time.Second, want: nil,
		},
		{
			name:       "a container renamed out goes at once when its slot is to stop first again",
			assigned:   assigned("v3", 1),
			containers: []Container{renamedOut(1, "v1"), running(1, "v2")},
			want:       []string{"replace web-1 with v3, stop first", "retire web-1-old-c1", "create web-1"},
		},
		{
			name:       "a container renamed out of a slot no longer assigned is removed",
			assigned:   assigned("v2"),
			containers: []Container{renamedOut(1, "v1")},
			want:       []string{"remove web-1-old-c1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			burst := tt.burst
			if burst == 0 {
				burst = 50
			}
			in := Input{Controller: "web", Assigned: tt.assigned, Hash: "spec", Containers: tt.containers, Removing: tt.removing,
				Blocked: tt.blocked, Burst: burst, Window: tt.window, Now: now}
			if got := acts(in, Plan(in)); !slices.Equal(got, tt.want) {
				t.Errorf("the node does:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestASlotAssignedWithoutATemplateRunsTheSpecs(t *testing.T) {
	if got := HashOf(api.Assignment{Node: "a"}, "spec"); got != "spec" {
		t.Errorf("a bare assignment runs %q, want the spec's", got)
	}
	if got := HashOf(api.Assignment{Node: "a", TemplateHash: "v1"}, "spec"); got != "v1" {
		t.Errorf("an assignment of v1 runs %q, want v1", got)
	}
}
