package bench

// This file describes the machine a run measured, as the Docker Engine
// sees it, so that figures from different machines are not compared by
// mistake.

import (
	"context"
	"fmt"
	"runtime"

	"github.com/docker/docker/client"
)

// Machine is the hardware and software a run measured.
type Machine struct {
	CPUs          int    `json:"cpus"`
	MemTotal      int64  `json:"memTotalBytes"`
	Kernel        string `json:"kernel"`
	OS            string `json:"os"`
	Go            string `json:"go"`
	Docker        string `json:"docker,omitempty"`
	DockerAPI     string `json:"dockerApi,omitempty"`
	StorageDriver string `json:"storageDriver,omitempty"`
}

func (m Machine) String() string {
	return fmt.Sprintf("%d CPUs, %.1f GiB RAM; kernel %s; %s; %s; Docker Engine %s (API %s, storage driver %s)",
		m.CPUs, float64(m.MemTotal)/(1<<30), m.Kernel, m.OS, m.Go, m.Docker, m.DockerAPI, m.StorageDriver)
}

// addDocker fills in what the engine says of itself and its machine.
func (m *Machine) addDocker(ctx context.Context, cli *client.Client) error {
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		return fmt.Errorf("docker version: %w", err)
	}
	info, err := cli.Info(ctx)
	if err != nil {
		return fmt.Errorf("docker info: %w", err)
	}
	*m = Machine{CPUs: info.NCPU, MemTotal: info.MemTotal, Kernel: info.KernelVersion, OS: info.OperatingSystem,
		Go: runtime.Version(), Docker: v.Version, DockerAPI: v.APIVersion, StorageDriver: info.Driver}
	return nil
}
