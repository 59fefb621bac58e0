package taskcontrol

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/go-connections/nat"

	"github.com/replication-manager/replication-manager/api"
)

func TestStatusText(t *testing.T) {
	tests := []struct {
		status     string
		wantHealth string
	}{
		{"Up 3 seconds", api.HealthNone},
		{"Up Less than a second (health: starting)", api.HealthStarting},
		{"Up 3 seconds (healthy)", api.HealthHealthy},
		{"Up About a minute (unhealthy)", api.HealthUnhealthy},
		{"Up 2 hours (Paused)", api.HealthNone},
		{"Exited (0) 2 seconds ago", api.HealthNone},
		{"Exited (137) About an hour ago", api.HealthNone},
		{"Restarting (3) Less than a second ago", api.HealthNone},
		{"Created", api.HealthNone},
		{"Removal In Progress", api.HealthNone},
		{"Dead", api.HealthNone},
		{"Exited (garbage", api.HealthNone},
	}
	for _, tt := range tests {
		if got := statusHealth(tt.status); got != tt.wantHealth {
			t.Errorf("statusHealth(%q): got %q, want %q", tt.status, got, tt.wantHealth)
		}
	}
}

func TestSummaryName(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"/web-1"}, "web-1"},
		{[]string{"/db/alias", "/web-1"}, "web-1"},
		{[]string{"/a/b"}, "a/b"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := SummaryName(tt.names); got != tt.want {
			t.Errorf("SummaryName(%q): got %q, want %q", tt.names, got, tt.want)
		}
	}
}

func TestTaskEvent(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	labels := map[string]string{"replicationController": "web"}
	tests := []struct {
		action     events.Action
		attributes map[string]string
		want       api.TaskEvent
	}{
		{"create", map[string]string{"name": "web-1", "image": "demo-task:latest", "replicationController": "web"},
			api.TaskEvent{Action: "create", Name: "web-1", Image: "demo-task:latest"}},
		{"start", map[string]string{"name": "web-1", "image": "demo-task:latest", "replicationController": "web"},
			api.TaskEvent{Action: "start", Name: "web-1", Image: "demo-task:latest"}},
		{"die", map[string]string{"exitCode": "3", "name": "web-1", "image": "demo-task:latest", "execDuration": "2", "replicationController": "web"},
			api.TaskEvent{Action: "die", Name: "web-1", Image: "demo-task:latest", ExitCode: 3}},
		{"die", map[string]string{"exitCode": "garbage", "name": "web-1", "replicationController": "web"},
			api.TaskEvent{Action: "die", Name: "web-1"}},
		{"kill", map[string]string{"signal": "15", "name": "web-1", "replicationController": "web"},
			api.TaskEvent{Action: "kill", Name: "web-1"}},
		{"health_status: healthy", map[string]string{"name": "web-1", "replicationController": "web"},
			api.TaskEvent{Action: "health_status", Name: "web-1", Health: api.HealthHealthy}},
		{"health_status: unhealthy", map[string]string{"replicationController": "web"},
			api.TaskEvent{Action: "health_status", Health: api.HealthUnhealthy}},
		{"health_status: starting", map[string]string{"replicationController": "web"},
			api.TaskEvent{Action: "health_status", Health: api.HealthStarting}},
		// a free-form health_status (the probe's output) names no health
		{"health_status: /task healthcheck ok", map[string]string{"replicationController": "web"},
			api.TaskEvent{Action: "health_status"}},
		{"exec_start: /task healthcheck", map[string]string{"execID": "x", "replicationController": "web"},
			api.TaskEvent{Action: "exec_start"}},
		{"rename", map[string]string{"oldName": "/web-1", "name": "web-1-dead", "replicationController": "web"},
			api.TaskEvent{Action: "rename", Name: "web-1-dead", OldName: "web-1"}},
	}
	for _, tt := range tests {
		attrs := maps.Clone(tt.attributes)
		got := taskEvent(events.Message{
			Type:     events.ContainerEventType,
			Action:   tt.action,
			Actor:    events.Actor{ID: "abc", Attributes: attrs},
			Time:     at.Unix(),
			TimeNano: at.UnixNano(),
		})
		want := tt.want
		want.ID, want.Labels = "abc", labels
		if !got.Time.Equal(at) {
			t.Errorf("taskEvent(%q): time %s, want %s", tt.action, got.Time, at)
		}
		got.Time = time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("taskEvent(%q, %v): got %+v, want %+v", tt.action, tt.attributes, got, want)
		}
		if !maps.Equal(attrs, tt.attributes) {
			t.Errorf("taskEvent(%q) changed the event's attributes", tt.action)
		}
	}
}

func TestEventTime(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 500, time.UTC)
	tests := []struct {
		m    events.Message
		want time.Time
	}{
		{events.Message{Time: at.Unix(), TimeNano: at.UnixNano()}, at},
		{events.Message{Time: at.Unix()}, at.Truncate(time.Second)},
		{events.Message{}, time.Time{}},
	}
	for _, tt := range tests {
		if got := eventTime(tt.m); !got.Equal(tt.want) || got.IsZero() != tt.want.IsZero() {
			t.Errorf("eventTime(time %d, timeNano %d) = %s, want %s", tt.m.Time, tt.m.TimeNano, got, tt.want)
		}
	}
}

func TestContainerConfig(t *testing.T) {
	spec := api.TaskSpec{
		Name:   "web-1",
		Labels: map[string]string{"name": "web"},
		Container: api.Container{
			Image:      "demo-task:latest",
			Command:    api.Command{"/task", "--listen", ":8080"},
			WorkingDir: "/",
			Ports: []api.Port{
				{ContainerPort: 8080},
				{ContainerPort: 9090, HostPort: 19090, HostIP: "127.0.0.1", Protocol: "UDP"},
			},
			Env:    []api.EnvVar{{Name: "MODE", Value: "demo"}},
			Memory: 64 << 20,
			CPU:    512,
		},
	}
	config, hostConfig, err := containerConfig(spec, 0)
	if err != nil {
		t.Fatalf("containerConfig: %v", err)
	}
	if got, want := []string(config.Cmd), []string{"/task", "--listen", ":8080"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Cmd: got %q, want %q", got, want)
	}
	if got, want := config.Env, []string{"MODE=demo"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Env: got %q, want %q", got, want)
	}
	if got, want := config.ExposedPorts, (nat.PortSet{"8080/tcp": {}, "9090/udp": {}}); !reflect.DeepEqual(got, want) {
		t.Errorf("ExposedPorts: got %v, want %v", got, want)
	}
	wantBindings := nat.PortMap{"9090/udp": {{HostIP: "127.0.0.1", HostPort: "19090"}}}
	if !reflect.DeepEqual(hostConfig.PortBindings, wantBindings) {
		t.Errorf("PortBindings: got %v, want %v", hostConfig.PortBindings, wantBindings)
	}
	if hostConfig.Memory != 64<<20 || hostConfig.CPUShares != 512 {
		t.Errorf("resources: got memory %d, cpu shares %d; want %d, 512", hostConfig.Memory, hostConfig.CPUShares, 64<<20)
	}
	config.Labels["name"] = "changed"
	config.Cmd[0] = "changed"
	if spec.Labels["name"] != "web" || spec.Container.Command[0] != "/task" {
		t.Error("the config shares maps or slices with the spec")
	}

	noCommand := api.TaskSpec{Name: "x", Container: api.Container{Image: "demo-task"}}
	config, _, err = containerConfig(noCommand, 0)
	if err != nil || config.Cmd != nil {
		t.Errorf("empty command: got Cmd %q, %v; want nil (the image's)", config.Cmd, err)
	}

	badPort := api.TaskSpec{Name: "x", Container: api.Container{Image: "demo-task", Ports: []api.Port{{ContainerPort: 70000}}}}
	if _, _, err := containerConfig(badPort, 0); err == nil {
		t.Error("port 70000: got nil error")
	}
}

func TestContainerConfigLeavesTheNewFieldsOff(t *testing.T) {
	// A 2014 spec gets a 2014 container: the image's health check, the
	// default isolation.
	config, hostConfig, err := containerConfig(api.TaskSpec{Name: "x", Container: api.Container{Image: "demo-task"}}, 0)
	if err != nil {
		t.Fatalf("containerConfig: %v", err)
	}
	if config.Healthcheck != nil {
		t.Errorf("Healthcheck: got %+v, want nil (the image's)", config.Healthcheck)
	}
	want := &container.HostConfig{}
	if !reflect.DeepEqual(hostConfig, want) {
		t.Errorf("HostConfig: got %+v, want the zero value", hostConfig)
	}
}

func TestContainerConfigHealthCheck(t *testing.T) {
	tests := []struct {
		name string
		hc   *api.HealthCheck
		want *container.HealthConfig
	}{
		{"every field", &api.HealthCheck{
			Test:        api.Command{"CMD", "/task", "healthcheck"},
			Interval:    api.Duration(2 * time.Second),
			Timeout:     api.Duration(3 * time.Second),
			Retries:     3,
			StartPeriod: api.Duration(5 * time.Second),
		}, &container.HealthConfig{
			Test:        []string{"CMD", "/task", "healthcheck"},
			Interval:    2 * time.Second,
			Timeout:     3 * time.Second,
			Retries:     3,
			StartPeriod: 5 * time.Second,
		}},
		{"a plain command runs without a shell", &api.HealthCheck{Test: api.Command{"/task", "healthcheck"}},
			&container.HealthConfig{Test: []string{"CMD", "/task", "healthcheck"}}},
		{"a shell command", &api.HealthCheck{Test: api.Command{"CMD-SHELL", "curl -f localhost"}},
			&container.HealthConfig{Test: []string{"CMD-SHELL", "curl -f localhost"}}},
		{"disabled", &api.HealthCheck{Test: api.Command{"NONE"}},
			&container.HealthConfig{Test: []string{"NONE"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := api.TaskSpec{Name: "x", Container: api.Container{Image: "demo-task", HealthCheck: tt.hc}}
			config, _, err := containerConfig(spec, 0)
			if err != nil {
				t.Fatalf("containerConfig: %v", err)
			}
			if !reflect.DeepEqual(config.Healthcheck, tt.want) {
				t.Errorf("Healthcheck: got %+v, want %+v", config.Healthcheck, tt.want)
			}
			config.Healthcheck.Test[0] = "changed"
			if tt.hc.Test[0] == "changed" {
				t.Error("the config shares the test with the spec")
			}
		})
	}
}

func TestContainerConfigSecurityFields(t *testing.T) {
	tests := []struct {
		name  string
		set   func(c *api.Container)
		check func(t *testing.T, hc *container.HostConfig)
	}{
		{"privileged", func(c *api.Container) { c.Privileged = true }, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			if !hc.Privileged {
				t.Error("Privileged: got false")
			}
		}},
		{"hostNetwork", func(c *api.Container) { c.HostNetwork = true }, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			if hc.NetworkMode != "host" || !hc.NetworkMode.IsHost() {
				t.Errorf("NetworkMode: got %q, want host", hc.NetworkMode)
			}
		}},
		{"hostPID", func(c *api.Container) { c.HostPID = true }, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			if !hc.PidMode.IsHost() {
				t.Errorf("PidMode: got %q, want host", hc.PidMode)
			}
		}},
		{"hostIPC", func(c *api.Container) { c.HostIPC = true }, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			if !hc.IpcMode.IsHost() {
				t.Errorf("IpcMode: got %q, want host", hc.IpcMode)
			}
		}},
		{"volumes", func(c *api.Container) {
			c.Volumes = []api.Volume{
				{HostPath: "/srv/data", ContainerPath: "/data"},
				{HostPath: "/etc/a.conf", ContainerPath: "/etc/a.conf", ReadOnly: true},
			}
		}, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			want := []mount.Mount{
				{Type: mount.TypeBind, Source: "/srv/data", Target: "/data"},
				{Type: mount.TypeBind, Source: "/etc/a.conf", Target: "/etc/a.conf", ReadOnly: true},
			}
			if !reflect.DeepEqual(hc.Mounts, want) {
				t.Errorf("Mounts: got %+v, want %+v", hc.Mounts, want)
			}
			if hc.Binds != nil {
				t.Errorf("Binds: got %q, want none: Mounts refuse a missing host path", hc.Binds)
			}
		}},
		{"devices", func(c *api.Container) {
			c.Devices = []api.Device{
				{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Permissions: "rwm"},
				{HostPath: "/dev/sdb", ContainerPath: "/dev/xvda", Permissions: "r"},
				{HostPath: "/dev/net/tun"},
			}
		}, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			want := []container.DeviceMapping{
				{PathOnHost: "/dev/fuse", PathInContainer: "/dev/fuse", CgroupPermissions: "rwm"},
				{PathOnHost: "/dev/sdb", PathInContainer: "/dev/xvda", CgroupPermissions: "r"},
				{PathOnHost: "/dev/net/tun", PathInContainer: "/dev/net/tun", CgroupPermissions: "rwm"},
			}
			if !reflect.DeepEqual(hc.Devices, want) {
				t.Errorf("Devices: got %+v, want %+v", hc.Devices, want)
			}
		}},
		{"capAdd", func(c *api.Container) { c.CapAdd = []string{"NET_ADMIN", "CAP_SYS_PTRACE"} }, func(t *testing.T, hc *container.HostConfig) {
			t.Helper()
			if want := (strslice.StrSlice{"NET_ADMIN", "CAP_SYS_PTRACE"}); !reflect.DeepEqual(hc.CapAdd, want) {
				t.Errorf("CapAdd: got %q, want %q", hc.CapAdd, want)
			}
			hc.CapAdd[0] = "changed" // must not reach the spec: see below
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := api.TaskSpec{Name: "x", Container: api.Container{Image: "demo-task", Memory: 64 << 20}}
			tt.set(&spec.Container)
			_, hostConfig, err := containerConfig(spec, 0)
			if err != nil {
				t.Fatalf("containerConfig: %v", err)
			}
			tt.check(t, hostConfig)
			if c := spec.Container.CapAdd; len(c) > 0 && c[0] == "changed" {
				t.Error("the config shares capAdd with the spec")
			}
			if hostConfig.Memory != 64<<20 {
				t.Errorf("Memory: got %d, want the spec's %d alongside", hostConfig.Memory, 64<<20)
			}
		})
	}
}
