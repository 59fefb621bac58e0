package taskcontrol

// This file holds what both task controls check of a container that joins
// another container's network namespace (api.TaskSpec.JoinNetwork), the way
// a task's containers after the first join the first one's, and how the
// engine's network mode names the container joined.

import (
	"fmt"
	"strings"

	"github.com/replication-manager/replication-manager/api"
)

// containerNetworkPrefix starts Docker's network mode of a container that
// joins another's network: container:<name or id>.
const containerNetworkPrefix = "container:"

// checkJoin refuses what Docker refuses of a container that joins another's
// network, before anything is created: ports (published or only exposed:
// the container whose network it is publishes them) and host networking.
func checkJoin(spec api.TaskSpec) error {
	if spec.JoinNetwork == "" {
		return nil
	}
	if len(spec.Container.Ports) > 0 {
		return fmt.Errorf("it joins the network of %s and can have no ports: publish them on %s", spec.JoinNetwork, spec.JoinNetwork)
	}
	if spec.Container.HostNetwork {
		return fmt.Errorf("it joins the network of %s and cannot also use the host's network", spec.JoinNetwork)
	}
	return nil
}

// joinedTo returns the container a network mode joins, or "" for any other
// mode (bridge, host, none, a network's name).
func joinedTo(networkMode string) string {
	target, _ := strings.CutPrefix(networkMode, containerNetworkPrefix)
	if target == networkMode {
		return ""
	}
	return target
}
