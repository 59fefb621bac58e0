package demospec

import (
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// SidecarController is Controller with a second container in each task: a
// prober that checks the first on 127.0.0.1:8080 through the network they
// share and serves its own health on 9090, both mounting an emptyDir
// volume named scratch (the prober read-only). The prober's health check
// asks its own /healthz, healthy only while it reaches the first.
func SidecarController(id, image string, replicas int, extraLabels map[string]string) *api.ReplicationController {
	rc := Controller(id, image, replicas, extraLabels)
	m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
	m.Containers[0].VolumeMounts = []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	m.Containers = append(m.Containers, api.Container{
		Name:         "prober",
		Image:        image,
		Command:      api.Command{"/task", "--listen", ":9090", "--probe", "http://127.0.0.1:8080/healthz"},
		VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch", ReadOnly: true}},
		HealthCheck: &api.HealthCheck{Test: api.Command{"/task", "healthcheck", "http://127.0.0.1:9090/healthz"},
			Interval: api.Duration(time.Second)},
	})
	m.Volumes = []api.TaskVolume{{Name: "scratch"}}
	return rc
}
