package leader

// This file is when a controller is blocked: it cannot progress without a
// change (a node that comes or gains room, a smaller reservation, another
// nodeSelector). Today that is a slot no node can take: the replicas it
// lacks hold up the scale, and a rollout whose maxUnavailable it uses up.
// A crash loop or a failed create is not blocked: both may recover on
// their own, and keep their own conditions (CrashLoop, ReplicaFailure).
// Nor is a registry with no node registered at all: that is how every
// manager starts, and its node comes within seconds.

import (
	"fmt"
	"strings"

	"github.com/replication-manager/replication-manager/api"
)

// blockedProgress returns the Progressing condition of controller id when
// u holds slots no node can take, and false when nothing blocks it.
// counts is the progress ("4 of 5 updated, 4 available"), kept at the
// end of the message.
func blockedProgress(id string, u *unschedulable, counts string) (api.Condition, bool) {
	if u == nil || len(u.slots) == 0 || u.noNode {
		return api.Condition{}, false
	}
	return api.Condition{Type: api.ConditionProgressing, Status: "False", Reason: api.ReasonBlocked,
		Message: unschedulableMessage(id, u) + "; " + counts}, true
}

// unschedulableMessage names the slots no node takes by their containers'
// names, and why: "slot web-5 fits no node: no node has room (a: cpu:
// ...)".
func unschedulableMessage(id string, u *unschedulable) string {
	names := make([]string, len(u.slots))
	for i, slot := range u.slots {
		names[i] = api.TaskName(id, slot)
	}
	if len(names) == 1 {
		return fmt.Sprintf("slot %s fits no node: %s", names[0], u.reason)
	}
	return fmt.Sprintf("slots %s fit no node: %s", strings.Join(names, ", "), u.reason)
}
