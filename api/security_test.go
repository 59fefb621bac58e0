package api

import (
	"reflect"
	"strings"
	"testing"
)

// refused is the message of a field the policy does not allow.
func refused(field, flag string) string {
	return c0 + "." + field + ": refused: the manager was not started with " + flag
}

func TestValidateSecurityPolicy(t *testing.T) {
	fields := []struct {
		field, flag string
		set         func(c *Container)
		allow       func(p *SecurityPolicy)
	}{
		{"privileged", "--allow-privileged", func(c *Container) { c.Privileged = true }, func(p *SecurityPolicy) { p.AllowPrivileged = true }},
		{"hostNetwork", "--allow-host-network", func(c *Container) { c.HostNetwork = true }, func(p *SecurityPolicy) { p.AllowHostNetwork = true }},
		{"hostPID", "--allow-host-pid", func(c *Container) { c.HostPID = true }, func(p *SecurityPolicy) { p.AllowHostPID = true }},
		{"hostIPC", "--allow-host-ipc", func(c *Container) { c.HostIPC = true }, func(p *SecurityPolicy) { p.AllowHostIPC = true }},
		{"volumes", "--allow-host-mounts", func(c *Container) {
			c.Volumes = []Volume{{HostPath: "/srv/data", ContainerPath: "/data", ReadOnly: true}}
		}, func(p *SecurityPolicy) { p.AllowHostMounts = true }},
		{"devices", "--allow-devices", func(c *Container) {
			c.Devices = []Device{{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Permissions: "rwm"}}
		}, func(p *SecurityPolicy) { p.AllowDevices = true }},
		{"capAdd", "--allow-cap-add", func(c *Container) { c.CapAdd = []string{"NET_ADMIN"} }, func(p *SecurityPolicy) { p.AllowCapAdd = true }},
		{"ports[0].hostPort", "--allow-host-ports", func(c *Container) { c.Ports[0].HostPort = 8080 }, func(p *SecurityPolicy) { p.AllowHostPorts = true }},
		{"ports[0].hostIP", "--allow-host-ports", func(c *Container) { c.Ports[0].HostIP = "127.0.0.1" }, func(p *SecurityPolicy) { p.AllowHostPorts = true }},
	}
	for _, f := range fields {
		t.Run(f.field, func(t *testing.T) {
			rc := validWeb()
			rc.DesiredState.Replicas = 1
			f.set(container0(rc))

			t.Run("refused by the zero policy, naming the flag", func(t *testing.T) {
				got := fieldErrorStrings(t, Validate(rc, ValidateOptions{}))
				if want := []string{refused(f.field, f.flag)}; !reflect.DeepEqual(got, want) {
					t.Errorf("Validate:\n got %q\nwant %q", got, want)
				}
			})
			t.Run("allowed by its own flag", func(t *testing.T) {
				var p SecurityPolicy
				f.allow(&p)
				if err := Validate(rc, ValidateOptions{Policy: p}); err != nil {
					t.Errorf("Validate: %v", err)
				}
			})
			t.Run("refused when every other flag is set", func(t *testing.T) {
				p := AllowAllPolicy()
				switch f.flag { // clear only this field's flag
				case "--allow-privileged":
					p.AllowPrivileged = false
				case "--allow-host-network":
					p.AllowHostNetwork = false
				case "--allow-host-pid":
					p.AllowHostPID = false
				case "--allow-host-ipc":
					p.AllowHostIPC = false
				case "--allow-host-mounts":
					p.AllowHostMounts = false
				case "--allow-devices":
					p.AllowDevices = false
				case "--allow-cap-add":
					p.AllowCapAdd = false
				case "--allow-host-ports":
					p.AllowHostPorts = false
				}
				got := fieldErrorStrings(t, Validate(rc, ValidateOptions{Policy: p}))
				if want := []string{refused(f.field, f.flag)}; !reflect.DeepEqual(got, want) {
					t.Errorf("Validate:\n got %q\nwant %q", got, want)
				}
			})
			t.Run("allowed by AllowAllPolicy", func(t *testing.T) {
				if err := Validate(rc, ValidateOptions{Policy: AllowAllPolicy()}); err != nil {
					t.Errorf("Validate: %v", err)
				}
			})
		})
	}

	t.Run("every refusal at once, in field order", func(t *testing.T) {
		rc := validWeb()
		rc.DesiredState.Replicas = 1
		for _, f := range fields {
			f.set(container0(rc))
		}
		// hostNetwork leaves a hostPort nothing to publish: a shape problem,
		// reported with the ports, before the refusals, whatever the policy
		shape := c0 + ".ports[0].hostPort: must be 0 with hostNetwork: ports are not published on the host's network; the container listens on the host's port 8080 directly"
		want := []string{shape}
		for _, f := range fields {
			want = append(want, refused(f.field, f.flag))
		}
		if got := fieldErrorStrings(t, Validate(rc, ValidateOptions{})); !reflect.DeepEqual(got, want) {
			t.Errorf("Validate:\n got %q\nwant %q", got, want)
		}
		if got := fieldErrorStrings(t, Validate(rc, ValidateOptions{Policy: AllowAllPolicy()})); !reflect.DeepEqual(got, []string{shape}) {
			t.Errorf("Validate with AllowAllPolicy:\n got %q\nwant %q", got, []string{shape})
		}
	})
	t.Run("fields that are off or empty need no flag", func(t *testing.T) {
		rc := validWeb()
		c := container0(rc)
		c.Volumes, c.Devices, c.CapAdd = []Volume{}, []Device{}, []string{}
		if err := Validate(rc, ValidateOptions{}); err != nil {
			t.Errorf("Validate: %v", err)
		}
	})
}

func TestAllowAllPolicyAllowsEveryField(t *testing.T) {
	// A field added to SecurityPolicy must be added to AllowAllPolicy too.
	p := reflect.ValueOf(AllowAllPolicy())
	for i := range p.NumField() {
		if !p.Field(i).Bool() {
			t.Errorf("AllowAllPolicy().%s is false", p.Type().Field(i).Name)
		}
	}
}

// TestValidateCapAddAll checks that "ALL", every capability at once, needs
// --allow-cap-add-all on top of --allow-cap-add, however it is spelled.
func TestValidateCapAddAll(t *testing.T) {
	const shape = `: must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got `
	capAdd := SecurityPolicy{AllowCapAdd: true}
	both := SecurityPolicy{AllowCapAdd: true, AllowCapAddAll: true}
	tests := []struct {
		name   string
		caps   []string
		policy SecurityPolicy
		want   []string // nil: valid
	}{
		{"ALL with --allow-cap-add", []string{"ALL"}, capAdd, []string{refused("capAdd[0]", "--allow-cap-add-all")}},
		{"CAP_ALL with --allow-cap-add", []string{"CAP_ALL"}, capAdd, []string{refused("capAdd[0]", "--allow-cap-add-all")}},
		{"ALL after another capability", []string{"NET_ADMIN", "ALL"}, capAdd, []string{refused("capAdd[1]", "--allow-cap-add-all")}},
		{"all in lower case", []string{"all"}, capAdd, []string{refused("capAdd[0]", "--allow-cap-add-all"), c0 + ".capAdd[0]" + shape + `"all"`}},
		{"Cap_All in mixed case", []string{"Cap_All"}, capAdd, []string{refused("capAdd[0]", "--allow-cap-add-all"), c0 + ".capAdd[0]" + shape + `"Cap_All"`}},
		{"ALL twice", []string{"ALL", "CAP_ALL"}, capAdd, []string{refused("capAdd[0]", "--allow-cap-add-all"), refused("capAdd[1]", "--allow-cap-add-all")}},
		{"ALL with the zero policy", []string{"ALL"}, SecurityPolicy{}, []string{refused("capAdd", "--allow-cap-add"), refused("capAdd[0]", "--allow-cap-add-all")}},
		{"ALL with --allow-cap-add-all alone", []string{"ALL"}, SecurityPolicy{AllowCapAddAll: true}, []string{refused("capAdd", "--allow-cap-add")}},
		{"ALL with both flags", []string{"ALL"}, both, nil},
		{"CAP_ALL with both flags", []string{"NET_ADMIN", "CAP_ALL"}, both, nil},
		{"ALL with AllowAllPolicy", []string{"ALL"}, AllowAllPolicy(), nil},
		{"a name that only starts with ALL", []string{"ALLX", "CAP_ALL_X"}, capAdd, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			container0(rc).CapAdd = tt.caps
			got := fieldErrorStrings(t, Validate(rc, ValidateOptions{Policy: tt.policy}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestValidateSecurityShape checks the shape of the security fields, which
// is checked whatever the policy: these run with AllowAllPolicy, and the
// refusals of the zero policy come on top.
func TestValidateSecurityShape(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Container)
		want   []string // nil: valid
	}{
		// volumes
		{name: "a read-only and a writable volume", mutate: func(c *Container) {
			c.Volumes = []Volume{{HostPath: "/srv/data", ContainerPath: "/data"}, {HostPath: "/etc/a.conf", ContainerPath: "/etc/a.conf", ReadOnly: true}}
		}},
		{name: "the host's root mounted elsewhere", mutate: func(c *Container) { c.Volumes = []Volume{{HostPath: "/", ContainerPath: "/host"}} }},
		{name: "volume paths missing", mutate: func(c *Container) { c.Volumes = []Volume{{}} },
			want: []string{c0 + ".volumes[0].hostPath: required", c0 + ".volumes[0].containerPath: required"}},
		{name: "volume paths relative", mutate: func(c *Container) { c.Volumes = []Volume{{HostPath: "srv/data", ContainerPath: "data"}} },
			want: []string{c0 + `.volumes[0].hostPath: must be an absolute path, got "srv/data"`, c0 + `.volumes[0].containerPath: must be an absolute path, got "data"`}},
		{name: "volume paths not clean", mutate: func(c *Container) {
			c.Volumes = []Volume{{HostPath: "/srv/../etc", ContainerPath: "/data/"}, {HostPath: "/srv//x", ContainerPath: "/a/./b"}}
		}, want: []string{
			c0 + `.volumes[0].hostPath: must be a clean path ("/etc"), got "/srv/../etc"`,
			c0 + `.volumes[0].containerPath: must be a clean path ("/data"), got "/data/"`,
			c0 + `.volumes[1].hostPath: must be a clean path ("/srv/x"), got "/srv//x"`,
			c0 + `.volumes[1].containerPath: must be a clean path ("/a/b"), got "/a/./b"`,
		}},
		{name: "volume over the container's root", mutate: func(c *Container) { c.Volumes = []Volume{{HostPath: "/srv", ContainerPath: "/"}} },
			want: []string{c0 + `.volumes[0].containerPath: must not be "/"`}},
		{name: "two volumes on one container path", mutate: func(c *Container) {
			c.Volumes = []Volume{{HostPath: "/a", ContainerPath: "/data"}, {HostPath: "/b", ContainerPath: "/data", ReadOnly: true}}
		}, want: []string{c0 + `.volumes[1].containerPath: "/data" is already used by ` + c0 + ".volumes[0].containerPath"}},
		{name: "one host path on two container paths", mutate: func(c *Container) {
			c.Volumes = []Volume{{HostPath: "/a", ContainerPath: "/x"}, {HostPath: "/a", ContainerPath: "/y"}}
		}},

		// devices
		{name: "device with only a host path", mutate: func(c *Container) { c.Devices = []Device{{HostPath: "/dev/fuse"}} }},
		{name: "device renamed in the container", mutate: func(c *Container) {
			c.Devices = []Device{{HostPath: "/dev/sdb", ContainerPath: "/dev/xvda", Permissions: "r"}}
		}},
		{name: "device host path missing", mutate: func(c *Container) { c.Devices = []Device{{ContainerPath: "/dev/fuse"}} },
			want: []string{c0 + ".devices[0].hostPath: required"}},
		{name: "device paths relative", mutate: func(c *Container) { c.Devices = []Device{{HostPath: "dev/fuse", ContainerPath: "fuse"}} },
			want: []string{c0 + `.devices[0].hostPath: must be an absolute path, got "dev/fuse"`, c0 + `.devices[0].containerPath: must be an absolute path, got "fuse"`}},
		{name: "device path not clean", mutate: func(c *Container) { c.Devices = []Device{{HostPath: "/dev/../dev/fuse"}} },
			want: []string{c0 + `.devices[0].hostPath: must be a clean path ("/dev/fuse"), got "/dev/../dev/fuse"`}},
		{name: "two devices on one path, one by default", mutate: func(c *Container) {
			c.Devices = []Device{{HostPath: "/dev/fuse"}, {HostPath: "/dev/other", ContainerPath: "/dev/fuse"}}
		}, want: []string{c0 + `.devices[1].containerPath: "/dev/fuse" is already used by ` + c0 + ".devices[0].hostPath"}},
		{name: "a device on a volume's path", mutate: func(c *Container) {
			c.Volumes = []Volume{{HostPath: "/srv/tun", ContainerPath: "/dev/net/tun"}}
			c.Devices = []Device{{HostPath: "/dev/net/tun"}}
		}, want: []string{c0 + `.devices[0].hostPath: "/dev/net/tun" is already used by ` + c0 + ".volumes[0].containerPath"}},
		{name: "device permissions in any order", mutate: func(c *Container) {
			c.Devices = []Device{{HostPath: "/dev/a", Permissions: "mwr"}, {HostPath: "/dev/b", Permissions: "w"}, {HostPath: "/dev/c", Permissions: "rm"}}
		}},
		{name: "device permissions with an unknown letter", mutate: func(c *Container) { c.Devices = []Device{{HostPath: "/dev/a", Permissions: "rwx"}} },
			want: []string{c0 + `.devices[0].permissions: must be a combination of "r", "w" and "m", each at most once, got "rwx"`}},
		{name: "device permissions with a letter twice", mutate: func(c *Container) { c.Devices = []Device{{HostPath: "/dev/a", Permissions: "rr"}} },
			want: []string{c0 + `.devices[0].permissions: must be a combination of "r", "w" and "m", each at most once, got "rr"`}},
		{name: "device permissions in capitals", mutate: func(c *Container) { c.Devices = []Device{{HostPath: "/dev/a", Permissions: "RWM"}} },
			want: []string{c0 + `.devices[0].permissions: must be a combination of "r", "w" and "m", each at most once, got "RWM"`}},

		// capAdd
		{name: "capabilities with and without CAP_", mutate: func(c *Container) { c.CapAdd = []string{"NET_ADMIN", "CAP_SYS_PTRACE", "ALL"} }},
		{name: "capability in lower case", mutate: func(c *Container) { c.CapAdd = []string{"net_admin"} },
			want: []string{c0 + `.capAdd[0]: must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got "net_admin"`}},
		{name: "capability empty", mutate: func(c *Container) { c.CapAdd = []string{"NET_RAW", ""} },
			want: []string{c0 + `.capAdd[1]: must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got ""`}},
		{name: "capability prefix alone", mutate: func(c *Container) { c.CapAdd = []string{"CAP_"} },
			want: []string{c0 + `.capAdd[0]: must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got "CAP_"`}},
		{name: "capability with a digit or a space", mutate: func(c *Container) { c.CapAdd = []string{"NET_ADMIN2", "NET ADMIN"} },
			want: []string{
				c0 + `.capAdd[0]: must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got "NET_ADMIN2"`,
				c0 + `.capAdd[1]: must be a capability name in capitals, such as "NET_ADMIN" or "CAP_NET_ADMIN", got "NET ADMIN"`,
			}},

		// hostNetwork and ports
		{name: "hostNetwork with an unpublished port", mutate: func(c *Container) { c.HostNetwork = true }},
		{name: "hostNetwork with a published port", mutate: func(c *Container) {
			c.HostNetwork = true
			c.Ports = []Port{{ContainerPort: 8080}, {ContainerPort: 9090, HostPort: 9090}}
		}, want: []string{c0 + ".ports[1].hostPort: must be 0 with hostNetwork: ports are not published on the host's network; the container listens on the host's port 9090 directly"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			rc.DesiredState.Replicas = 1
			tt.mutate(container0(rc))
			got := fieldErrorStrings(t, Validate(rc, ValidateOptions{Policy: AllowAllPolicy()}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
			// The zero policy adds its refusals, before the shape problems
			// of each field, and keeps every shape problem.
			withRefusals := fieldErrorStrings(t, Validate(rc, ValidateOptions{}))
			var shape []string
			for _, msg := range withRefusals {
				if !strings.Contains(msg, ": refused: ") {
					shape = append(shape, msg)
				}
			}
			if !reflect.DeepEqual(shape, tt.want) {
				t.Errorf("Validate with the zero policy, without its refusals:\n got %q\nwant %q", shape, tt.want)
			}
		})
	}
}

func TestValidateHostPortAndReplicas(t *testing.T) {
	tests := []struct {
		name     string
		replicas int
		hostPort int
		want     []string
	}{
		{"no host port, 3 replicas", 3, 0, nil},
		{"a host port, 0 replicas", 0, 8080, nil},
		{"a host port, 1 replica", 1, 8080, nil},
		// more replicas than nodes are valid: the scheduler reports the
		// extra ones as unschedulable (docs/CONTRACT.md, Nodes)
		{"a host port, 2 replicas", 2, 8080, nil},
		{"a host port, 3 replicas", 3, 8080, nil},
		{"an invalid host port is reported once", 3, 65536,
			[]string{c0 + ".ports[0].hostPort: must be between 0 and 65535, got 65536"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			rc.DesiredState.Replicas = tt.replicas
			container0(rc).Ports[0].HostPort = tt.hostPort
			got := fieldErrorStrings(t, Validate(rc, allowHostPorts))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// fullController is testdata/controller-full.json: every field of the spec.
func fullController() *ReplicationController {
	labels := func() map[string]string { return map[string]string{"name": "agent"} }
	return &ReplicationController{
		ID:     "agent",
		Labels: labels(),
		DesiredState: ReplicationControllerState{
			Replicas:        1,
			ReplicasInSet:   labels(),
			MinReadySeconds: 5,
			TaskTemplate: TaskTemplate{
				Labels: labels(),
				DesiredState: TaskState{Manifest: ContainerManifest{
					Version: "v1beta1",
					Containers: []Container{{
						Name:       "agent",
						Image:      "demo-task:latest",
						Command:    Command{"/task", "--listen", ":8080"},
						WorkingDir: "/data",
						Ports:      []Port{{Name: "http", ContainerPort: 8080, HostPort: 18080, HostIP: "127.0.0.1", Protocol: "TCP"}},
						Env:        []EnvVar{{Name: "MODE", Value: "demo"}},
						Memory:     64 << 20,
						CPU:        512,
						HealthCheck: &HealthCheck{
							Test:        Command{"/task", "healthcheck"},
							Interval:    Duration(2e9),
							Timeout:     Duration(3e9),
							Retries:     3,
							StartPeriod: Duration(90e9),
						},
						Privileged: true,
						HostPID:    true,
						HostIPC:    true,
						Volumes: []Volume{
							{HostPath: "/srv/data", ContainerPath: "/data"},
							{HostPath: "/etc/agent.conf", ContainerPath: "/etc/agent.conf", ReadOnly: true},
						},
						Devices: []Device{
							{HostPath: "/dev/fuse", ContainerPath: "/dev/fuse", Permissions: "rwm"},
							{HostPath: "/dev/net/tun"},
						},
						CapAdd: []string{"NET_ADMIN", "CAP_SYS_PTRACE"},
					}},
				}},
			},
		},
	}
}

func TestDecodeEveryField(t *testing.T) {
	for _, file := range []string{"controller-full.json", "controller-full.yaml"} {
		t.Run(file, func(t *testing.T) {
			got, err := Decode(readTestdata(t, file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if want := fullController(); !reflect.DeepEqual(got, want) {
				t.Errorf("Decode:\n got %+v\nwant %+v", got, want)
			}
			opts := ValidateOptions{Key: "/registry/controllers/agent", Policy: AllowAllPolicy()}
			if err := Validate(got, opts); err != nil {
				t.Errorf("Validate: %v", err)
			}
			err = Validate(got, ValidateOptions{Key: "/registry/controllers/agent"})
			want := []string{
				refused("privileged", "--allow-privileged"),
				refused("hostPID", "--allow-host-pid"),
				refused("hostIPC", "--allow-host-ipc"),
				refused("volumes", "--allow-host-mounts"),
				refused("devices", "--allow-devices"),
				refused("capAdd", "--allow-cap-add"),
				refused("ports[0].hostPort", "--allow-host-ports"),
				refused("ports[0].hostIP", "--allow-host-ports"),
			}
			if got := fieldErrorStrings(t, err); !reflect.DeepEqual(got, want) {
				t.Errorf("Validate with the zero policy:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestEncodeRoundTripsEveryField(t *testing.T) {
	rc := fullController()
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].HostNetwork = true
	for name, encode := range map[string]func(*ReplicationController) ([]byte, error){"JSON": Encode, "YAML": EncodeYAML} {
		t.Run(name, func(t *testing.T) {
			data, err := encode(rc)
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
		})
	}
}

func TestDecodeSecurityFieldsRejects(t *testing.T) {
	const spec = `{"id": "web", "desiredState": {"taskTemplate": {"desiredState": {"manifest": {"containers": [{
	  "image": "demo-task", %s}]}}}}}`
	tests := []struct {
		name, input, want string
	}{
		{"privileged as a string", `"privileged": "true"`, c0 + ".privileged: cannot unmarshal string into bool"},
		{"hostNetwork as a number", `"hostNetwork": 1`, c0 + ".hostNetwork: cannot unmarshal number into bool"},
		{"a volume as a string", `"volumes": ["/srv:/data"]`, c0 + ".volumes[0]: cannot unmarshal string into object"},
		{"an unknown volume field", `"volumes": [{"hostPath": "/srv", "mountPath": "/data"}]`, `unknown field "` + c0 + `.volumes[0].mountPath"`},
		{"readOnly as a string", `"volumes": [{"hostPath": "/srv", "containerPath": "/data", "readOnly": "yes"}]`,
			c0 + ".volumes[0].readOnly: cannot unmarshal string into bool"},
		{"a device field in the wrong case", `"devices": [{"hostpath": "/dev/fuse"}]`,
			`unknown field "` + c0 + `.devices[0].hostpath" (did you mean "hostPath"?)`},
		{"capAdd as a string", `"capAdd": "NET_ADMIN"`, c0 + ".capAdd: cannot unmarshal string into array"},
		{"hostPid in the wrong case", `"hostPid": true`, `unknown field "` + c0 + `.hostPid" (did you mean "hostPID"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(strings.Replace(spec, "%s", tt.input, 1)))
			if want := "decode controller: " + tt.want; err == nil || err.Error() != want {
				t.Errorf("error\n got %v\nwant %s", err, want)
			}
		})
	}
}

func TestTemplateHashOfTheNewFields(t *testing.T) {
	const pinned = "97c7f65b61" // TestTemplateHash's "is stable across releases"
	t.Run("unset fields leave the example's hash as it was", func(t *testing.T) {
		rc, err := Decode(readTestdata(t, "controller-web.json"))
		if err != nil {
			t.Fatal(err)
		}
		c := container0(rc)
		c.CPU = 512                                                         // as the example had it when the hash was pinned
		c.Volumes, c.Devices, c.CapAdd = []Volume{}, []Device{}, []string{} // empty is unset
		if got := TemplateHash(&rc.DesiredState.TaskTemplate); got != pinned {
			t.Errorf("TemplateHash = %q, want %q", got, pinned)
		}
	})
	changes := []struct {
		name string
		set  func(c *Container)
	}{
		{"healthCheck", func(c *Container) { c.HealthCheck = healthCheck() }},
		{"healthCheck interval", func(c *Container) { c.HealthCheck = &HealthCheck{Test: Command{"NONE"}, Interval: 1} }},
		{"an empty healthCheck", func(c *Container) { c.HealthCheck = &HealthCheck{} }},
		{"privileged", func(c *Container) { c.Privileged = true }},
		{"hostNetwork", func(c *Container) { c.HostNetwork = true }},
		{"hostPID", func(c *Container) { c.HostPID = true }},
		{"hostIPC", func(c *Container) { c.HostIPC = true }},
		{"volumes", func(c *Container) { c.Volumes = []Volume{{HostPath: "/a", ContainerPath: "/a"}} }},
		{"devices", func(c *Container) { c.Devices = []Device{{HostPath: "/dev/fuse"}} }},
		{"capAdd", func(c *Container) { c.CapAdd = []string{"NET_ADMIN"} }},
	}
	seen := map[string]string{pinned: "nothing"}
	for _, ch := range changes {
		t.Run("changes with "+ch.name, func(t *testing.T) {
			rc := webController()
			ch.set(container0(rc))
			got := TemplateHash(&rc.DesiredState.TaskTemplate)
			if other, dup := seen[got]; dup {
				t.Errorf("TemplateHash with %s = %q, the same as with %s", ch.name, got, other)
			}
			seen[got] = ch.name
		})
	}
}
