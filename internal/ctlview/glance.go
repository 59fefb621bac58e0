package ctlview

// This file is the state at a glance that the status page shows, in words
// that mean what they say: rolling only while a template rolls out,
// degraded while fewer are available than desired without one.

import (
	"fmt"

	"github.com/replication-manager/replication-manager/api"
)

// StateDegraded: fewer containers are available than the spec asks for,
// and no template is rolling out (a removed container being replaced, a
// scale-up under way, a node gone).
const StateDegraded = "degraded"

// Glance is Summarize with rolling and degraded told apart. desired is the
// spec's replica count, negative when the spec does not decode. The
// manager's Progressing condition stays RollingUpdate until a rollout's
// replicas are all of the current template and available, so also while
// a removed container is replaced meanwhile: Glance calls a controller rolling
// only while some of its containers still run an outdated template
// (replicas above updatedReplicas), and degraded while fewer than desired
// are available otherwise. Failing (ReplicaFailure, CrashLoop,
// InvalidSpec, a stalled rollout) and pending are as Summarize says. In
// the last step of a rollout that removes before it creates (maxSurge 0),
// once no outdated container is left but its replacement is not yet
// available, the controller shows as degraded: one is missing, and no old
// one is left to roll.
func Glance(desired int, st *api.ReplicationControllerStatus, specErr error) (state string, reasons []string) {
	state, reasons = Summarize(st, specErr)
	if state == StateFailing || state == StatePending {
		return state, reasons
	}
	if state == StateRolling && st.Replicas > st.UpdatedReplicas {
		return state, reasons
	}
	if desired >= 0 && st.AvailableReplicas < desired {
		return StateDegraded, []string{fmt.Sprintf("%d of %d available", st.AvailableReplicas, desired)}
	}
	return StateOK, nil
}
