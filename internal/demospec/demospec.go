// Package demospec builds controllers of the demo workload (cmd/demo-task)
// in the 2014 shape, for the end-to-end tests and the benchmarks.
package demospec

import "github.com/replication-manager/replication-manager/api"

// Command is what a demo container runs: the demo task, listening on 8080.
var Command = []string{"/task", "--listen", ":8080"}

// Controller returns a controller of replicas containers of image, selected
// by name=id, whose containers also carry extraLabels (a test run's, for
// its cleanup).
func Controller(id, image string, replicas int, extraLabels map[string]string) *api.ReplicationController {
	labels := map[string]string{"name": id}
	for k, v := range extraLabels {
		labels[k] = v
	}
	return &api.ReplicationController{
		ID:     id,
		Labels: map[string]string{"name": id},
		DesiredState: api.ReplicationControllerState{
			Replicas:      replicas,
			ReplicasInSet: map[string]string{"name": id},
			TaskTemplate: api.TaskTemplate{
				Labels: labels,
				DesiredState: api.TaskState{Manifest: api.ContainerManifest{
					Version:    "v1beta1",
					Containers: []api.Container{{Name: "task", Image: image, Command: append(api.Command(nil), Command...)}},
				}},
			},
		},
	}
}
