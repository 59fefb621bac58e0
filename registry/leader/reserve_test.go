package leader

import (
	"testing"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry/decide"
)

func TestATaskReservesItsContainersOrItsLargestInitContainer(t *testing.T) {
	tmpl := &api.TaskTemplate{DesiredState: api.TaskState{Manifest: api.ContainerManifest{
		Containers:     []api.Container{{Memory: 64 << 20, CPU: 512}, {Memory: 16 << 20, CPU: 128}},
		InitContainers: []api.Container{{Memory: 32 << 20, CPU: 1024}},
	}}}
	// the init container runs alone, before the others: it needs its own
	// CPU shares, and fits in the containers' memory
	if got, want := reserveOf(tmpl), (decide.Resources{Memory: 80 << 20, CPU: 1024}); got != want {
		t.Errorf("reserve = %+v, want %+v", got, want)
	}
}
