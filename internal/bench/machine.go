package bench

// This file describes the machine a run measured, from /proc and the
// Docker Engine, so that figures from different machines are not compared
// by mistake.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/docker/docker/client"
)

// Machine is the hardware and software a run measured.
type Machine struct {
	CPU           string `json:"cpu"`
	Cores         int    `json:"cores"`
	MemTotal      uint64 `json:"memTotalBytes"`
	Kernel        string `json:"kernel"`
	OS            string `json:"os"`
	Go            string `json:"go"`
	Docker        string `json:"docker,omitempty"`
	DockerAPI     string `json:"dockerApi,omitempty"`
	StorageDriver string `json:"storageDriver,omitempty"`
}

func (m Machine) String() string {
	s := fmt.Sprintf("%s, %d cores, %.1f GiB RAM; kernel %s; %s; %s",
		m.CPU, m.Cores, float64(m.MemTotal)/(1<<30), m.Kernel, m.OS, m.Go)
	if m.Docker != "" {
		s += fmt.Sprintf("; Docker Engine %s (API %s, storage driver %s)", m.Docker, m.DockerAPI, m.StorageDriver)
	}
	return s
}

// describeMachine reads what /proc says; unknown fields stay empty.
func describeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown CPU", OS: "unknown OS"}
	if v, ok := procField("/proc/cpuinfo", "model name"); ok {
		m.CPU = v
	}
	if v, ok := procField("/proc/meminfo", "MemTotal"); ok {
		m.MemTotal = parseKB(v)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if v, ok := procField("/etc/os-release", "PRETTY_NAME"); ok {
		m.OS = strings.Trim(v, `"`)
	}
	return m
}

// addDocker fills in the engine's version; it leaves them empty when the
// engine does not answer.
func (m *Machine) addDocker(ctx context.Context, cli *client.Client) error {
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		return fmt.Errorf("docker version: %w", err)
	}
	info, err := cli.Info(ctx)
	if err != nil {
		return fmt.Errorf("docker info: %w", err)
	}
	m.Docker, m.DockerAPI, m.StorageDriver = v.Version, v.APIVersion, info.Driver
	return nil
}

// procField returns the value of the first "key: value" or "key=value" line
// of a file.
func procField(path, key string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			k, v, ok = strings.Cut(line, "=")
		}
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// parseKB reads "123456 kB" as bytes; 0 when it does not parse.
func parseKB(v string) uint64 {
	num, _, _ := strings.Cut(strings.TrimSpace(v), " ")
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0
	}
	return n << 10
}
