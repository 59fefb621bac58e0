package bench

// This file builds the controllers the benchmark writes and the labels
// that find everything a run started.

import (
	"context"
	"fmt"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/demospec"
	"github.com/replication-manager/replication-manager/registry"
)

const (
	// runLabel is on every container and service of a run; its value is the
	// run's id, so that cleanup finds exactly what this run started.
	runLabel = "rm-bench.run"
	// systemLabel says which system made a container: manager, raw,
	// swarm or plain.
	systemLabel = "rm-bench.system"
)

// taskCommand is what every benchmark container runs: the demo task,
// listening, as the e2e tests and the lab run it.
var taskCommand = demospec.Command

// newController returns a controller of image with replicas whose
// containers carry extra labels (the run's, for cleanup).
func newController(id, image string, replicas int, extra map[string]string) *api.ReplicationController {
	return demospec.Controller(id, image, replicas, extra)
}

// setReplicas is what `rcctl scale` does: read the spec, change the count,
// write it back if nobody changed it in between.
func setReplicas(ctx context.Context, store *registry.Store, id string, replicas int) error {
	spec, err := store.GetController(ctx, id)
	if err != nil {
		return err
	}
	if spec.Err != nil {
		return fmt.Errorf("controller %s: %w", id, spec.Err)
	}
	spec.Controller.DesiredState.Replicas = replicas
	_, err = store.UpdateController(ctx, spec.Controller, spec.ModRevision)
	return err
}
