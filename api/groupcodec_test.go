package api

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// sidecarController is testdata/controller-sidecar.json: the demo task and
// a sidecar that probes it on 127.0.0.1, sharing an emptyDir.
func sidecarController() *ReplicationController {
	return &ReplicationController{
		ID:     "web-probed",
		Labels: map[string]string{"name": "web-probed"},
		DesiredState: ReplicationControllerState{
			Replicas:      2,
			ReplicasInSet: map[string]string{"name": "web-probed"},
			TaskTemplate: TaskTemplate{
				Labels: map[string]string{"name": "web-probed"},
				DesiredState: TaskState{Manifest: ContainerManifest{
					Version: "v1beta1",
					Containers: []Container{{
						Name:         "web",
						Image:        "demo-task:latest",
						Command:      Command{"/task", "--listen", ":8080"},
						Ports:        []Port{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}},
						VolumeMounts: []VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
						Memory:       64 << 20,
					}, {
						Name:    "prober",
						Image:   "demo-task:latest",
						Command: Command{"/task", "--listen", ":9090", "--probe", "http://127.0.0.1:8080/healthz"},
						Ports:   []Port{{Name: "prober", ContainerPort: 9090, Protocol: "TCP"}},
						HealthCheck: &HealthCheck{
							Test:     Command{"/task", "healthcheck", "http://127.0.0.1:9090/healthz"},
							Interval: Duration(2 * time.Second),
						},
						VolumeMounts: []VolumeMount{{Name: "scratch", MountPath: "/scratch", ReadOnly: true}},
						Memory:       16 << 20,
					}},
					Volumes: []TaskVolume{{Name: "scratch", Source: &VolumeSource{EmptyDir: &EmptyDirSource{}}}},
				}},
			},
		},
	}
}

func TestDecodeReadsTheSidecarExample(t *testing.T) {
	for _, file := range []string{"controller-sidecar.json", "controller-sidecar.yaml"} {
		t.Run(file, func(t *testing.T) {
			got, err := Decode(readTestdata(t, file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if want := sidecarController(); !reflect.DeepEqual(got, want) {
				t.Errorf("Decode:\n got %+v\nwant %+v", got, want)
			}
			if err := Validate(got, ValidateOptions{Key: "web-probed"}); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestEncodeRoundTripsATaskGroup(t *testing.T) {
	rc := sidecarController()
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Volumes = append(rc.DesiredState.TaskTemplate.DesiredState.Manifest.Volumes,
		TaskVolume{Name: "host", Source: &VolumeSource{HostDir: &HostDirSource{Path: "/srv/data"}}},
		TaskVolume{Name: "default"}) // no source: an emptyDir, written without one
	for _, enc := range []struct {
		name   string
		encode func(*ReplicationController) ([]byte, error)
	}{
		{"JSON", Encode},
		{"YAML", EncodeYAML},
	} {
		t.Run(enc.name, func(t *testing.T) {
			data, err := enc.encode(rc)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			got, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode of the encoding: %v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, rc) {
				t.Errorf("round trip:\n got %+v\nwant %+v\nencoding:\n%s", got, rc, data)
			}
			for _, want := range []string{"volumeMounts", "mountPath", "readOnly", "emptyDir", "hostDir", "/srv/data"} {
				if !strings.Contains(string(data), want) {
					t.Errorf("encoding lacks %q:\n%s", want, data)
				}
			}
		})
	}
}

func TestDecodeRejectsBadTaskGroupFields(t *testing.T) {
	sidecar := readTestdata(t, "controller-sidecar.json")
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"emptyDir in the wrong case", replaceOnce(t, sidecar, `"emptyDir"`, `"emptydir"`),
			`decode controller: unknown field "` + pathVolumes + `[0].source.emptydir" (did you mean "emptyDir"?)`},
		{"unknown field of a mount", replaceOnce(t, sidecar, `"mountPath": "/scratch", "readOnly"`, `"mountPath": "/scratch", "readonly"`),
			`decode controller: unknown field "` + pathContainers + `[1].volumeMounts[0].readonly" (did you mean "readOnly"?)`},
		{"string for readOnly", replaceOnce(t, sidecar, `"readOnly": true`, `"readOnly": "yes"`),
			"decode controller: " + pathContainers + "[1].volumeMounts[0].readOnly: cannot unmarshal string into bool"},
		{"a list for a source", replaceOnce(t, sidecar, `"source": {"emptyDir": {}}`, `"source": []`),
			"decode controller: " + pathVolumes + "[0].source: cannot unmarshal array into object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.input)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}
