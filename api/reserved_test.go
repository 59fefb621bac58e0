package api

import "testing"

// TestTheReservedExampleReservesOnPurpose: testdata/controller-reserved.json
// is the example that reserves, on purpose, a quarter of a CPU (cpu 256:
// 1024 shares are one CPU) and 128 MiB per replica: what placement holds
// on a node for each, as Kubernetes holds a pod's requests. Its two
// replicas fit a machine of 2 CPUs with room to spare.
func TestTheReservedExampleReservesOnPurpose(t *testing.T) {
	rc, err := Decode(readTestdata(t, "controller-reserved.json"))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := Validate(rc, ValidateOptions{Key: "/registry/controllers/" + rc.ID}); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	c := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	if c.CPU != 256 || c.Memory != 128<<20 {
		t.Errorf("cpu %d, memory %d; want 256 shares and 128 MiB", c.CPU, c.Memory)
	}
	if total := int64(rc.DesiredState.Replicas) * c.CPU; total > 2*1024/2 {
		t.Errorf("%d replicas reserve %d shares: more than half of a 2-CPU machine", rc.DesiredState.Replicas, total)
	}
}

// TestTheWalkthroughExamplesReserveNoCPU: the README's walkthrough scales
// web to 5 and runs the sidecar example beside it on a machine of 2 CPUs;
// a cpu reservation in them would leave replicas unschedulable there.
func TestTheWalkthroughExamplesReserveNoCPU(t *testing.T) {
	for _, file := range []string{"controller-web.json", "controller-web.yaml", "controller-sidecar.json", "controller-sidecar.yaml"} {
		rc, err := Decode(readTestdata(t, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, c := range rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers {
			if c.CPU != 0 {
				t.Errorf("%s: container %s reserves cpu %d", file, c.Name, c.CPU)
			}
		}
	}
}
