package leader

// This file is a node's report as the leader keeps it: only what its
// decisions and the merged status read, turned into decide's form once,
// when the report comes, rather than at every decision. At 10,000
// controllers × 10 the decoded reports were the largest thing the leader
// held (about 5 KB each, with every container's ID and image, which it
// never reads).

import (
	"unique"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/decide"
)

// leaderReport is one node's report on one controller.
type leaderReport struct {
	// report holds the node and its status; no tasks.
	report api.NodeReport
	// slots are the slots the node runs or claims, startedFirst those of
	// which it may run two containers (nil when none), and blocked those
	// whose names an outsider holds there.
	slots        decide.SlotSet
	startedFirst decide.SlotSet
	blocked      []int
	containers   []decide.Container
	// last is what a gone node's record shows of each container
	// (leadergone.go), in the order of containers.
	last []lastTask
	// images are the containers grouped by template and image ID
	// (images.go).
	images []imageGroup
}

// lastTask is a reported container's name, image and state: the image
// and the state held once for all containers that share them, and the
// name only when it is not its slot's (Container.Named), which nameOf
// makes again.
type lastTask struct {
	name         string
	image, state unique.Handle[string]
}

// nameOf is the name of the container c of controller id that last
// describes.
func (last lastTask) nameOf(id string, c decide.Container) string {
	if c.Named {
		return api.TaskName(id, c.Slot)
	}
	return last.name
}

// newLeaderReport keeps of r, a report on controller id, what the leader
// reads.
func newLeaderReport(id string, r *api.NodeReport) *leaderReport {
	lr := &leaderReport{report: api.NodeReport{Node: r.Node, Status: r.Status}, blocked: r.BlockedSlots,
		slots: decide.NewSlotSet(r.Slots...), containers: make([]decide.Container, 0, len(r.Tasks)),
		last: make([]lastTask, 0, len(r.Tasks)), images: imageGroups(r.Tasks)}
	if len(r.StartedFirst) > 0 {
		lr.startedFirst = decide.NewSlotSet(r.StartedFirst...)
	}
	for _, t := range r.Tasks {
		c := reportedContainer(id, r.Node, t)
		c.Hash = unique.Make(c.Hash).Value() // one copy of each template's hash
		lr.containers = append(lr.containers, c)
		last := lastTask{image: unique.Make(t.Image), state: unique.Make(t.State)}
		if !c.Named {
			last.name = t.Name
		}
		lr.last = append(lr.last, last)
	}
	return lr
}
