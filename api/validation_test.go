package api

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// secret is the example's environment value in validation tests: no error
// message may contain it.
const secret = "s3cret-value"

// validWeb is the example controller with a secret in its environment.
func validWeb() *ReplicationController {
	rc := webController()
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Env = []EnvVar{{Name: "TOKEN", Value: secret}}
	return rc
}

func container0(rc *ReplicationController) *Container {
	return &rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
}

const c0 = "desiredState.taskTemplate.desiredState.manifest.containers[0]"

// allowHostPorts lets the port tests check a published port's values
// rather than its refusal (TestValidateSecurityPolicy).
var allowHostPorts = ValidateOptions{Policy: SecurityPolicy{AllowHostPorts: true}}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(rc *ReplicationController)
		opts   ValidateOptions
		want   []string // nil: valid
	}{
		{name: "the example", mutate: func(*ReplicationController) {}},

		// id
		{name: "id missing", mutate: func(rc *ReplicationController) { rc.ID = "" },
			want: []string{"id: required"}},
		{name: "id of one character", mutate: func(rc *ReplicationController) { rc.ID = "w" }},
		{name: "id of 63 characters", mutate: func(rc *ReplicationController) { rc.ID = strings.Repeat("w", 63) }},
		{name: "id of 64 characters", mutate: func(rc *ReplicationController) { rc.ID = strings.Repeat("w", 64) },
			want: []string{"id: must be at most 63 characters, got 64"}},
		{name: "id with every allowed character", mutate: func(rc *ReplicationController) { rc.ID = "Web_1.b-2" }},
		{name: "id starting with a digit", mutate: func(rc *ReplicationController) { rc.ID = "1web" }},
		{name: "id starting with a dash", mutate: func(rc *ReplicationController) { rc.ID = "-web" },
			want: []string{`id: must consist of letters, digits, '_', '.' or '-' and start with a letter or digit, got "-web"`}},
		{name: "id starting with a dot", mutate: func(rc *ReplicationController) { rc.ID = ".web" },
			want: []string{`id: must consist of letters, digits, '_', '.' or '-' and start with a letter or digit, got ".web"`}},
		{name: "id with a slash", mutate: func(rc *ReplicationController) { rc.ID = "web/1" },
			want: []string{`id: must consist of letters, digits, '_', '.' or '-' and start with a letter or digit, got "web/1"`}},
		{name: "id with a space", mutate: func(rc *ReplicationController) { rc.ID = "web 1" },
			want: []string{`id: must consist of letters, digits, '_', '.' or '-' and start with a letter or digit, got "web 1"`}},
		{name: "id equal to the key's last segment", mutate: func(*ReplicationController) {},
			opts: ValidateOptions{Key: "/registry/controllers/web"}},
		{name: "id equal to a bare key segment", mutate: func(*ReplicationController) {},
			opts: ValidateOptions{Key: "web"}},
		{name: "id different from the key", mutate: func(*ReplicationController) {},
			opts: ValidateOptions{Key: "/registry/controllers/api"},
			want: []string{`id: must equal the last segment of its key "api", got "web"`}},
		{name: "id compared case-sensitively", mutate: func(*ReplicationController) {},
			opts: ValidateOptions{Key: "/registry/controllers/Web"},
			want: []string{`id: must equal the last segment of its key "Web", got "web"`}},

		// replicas
		{name: "replicas -1", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = -1 },
			want: []string{"desiredState.replicas: must be between 0 and 1000, got -1"}},
		{name: "replicas 0", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 0 }},
		{name: "replicas at the default maximum", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 1000 }},
		{name: "replicas over the default maximum", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 1001 },
			want: []string{"desiredState.replicas: must be between 0 and 1000, got 1001"}},
		{name: "replicas at a configured maximum", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 5 },
			opts: ValidateOptions{MaxReplicas: 5}},
		{name: "replicas over a configured maximum", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 6 },
			opts: ValidateOptions{MaxReplicas: 5},
			want: []string{"desiredState.replicas: must be between 0 and 5, got 6"}},
		{name: "a configured maximum above the default", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 5000 },
			opts: ValidateOptions{MaxReplicas: 5000}},
		{name: "replicas at MaxMaxReplicas", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = MaxMaxReplicas },
			opts: ValidateOptions{MaxReplicas: MaxMaxReplicas}},
		{name: "a configured maximum above MaxMaxReplicas counts as it", mutate: func(rc *ReplicationController) { rc.DesiredState.Replicas = 150000 },
			opts: ValidateOptions{MaxReplicas: 200000},
			want: []string{"desiredState.replicas: must be between 0 and 100000, got 150000"}},

		// minReadySeconds
		{name: "minReadySeconds -1", mutate: func(rc *ReplicationController) { rc.DesiredState.MinReadySeconds = -1 },
			want: []string{"desiredState.minReadySeconds: must not be negative, got -1"}},
		{name: "minReadySeconds 30", mutate: func(rc *ReplicationController) { rc.DesiredState.MinReadySeconds = 30 }},

		// selector
		{name: "selector missing", mutate: func(rc *ReplicationController) { rc.DesiredState.ReplicasInSet = nil },
			want: []string{"desiredState.replicasInSet: must not be empty"}},
		{name: "selector empty", mutate: func(rc *ReplicationController) { rc.DesiredState.ReplicasInSet = map[string]string{} },
			want: []string{"desiredState.replicasInSet: must not be empty"}},
		{name: "selector a subset of the template labels", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.Labels["tier"] = "front"
		}},
		{name: "selector key missing from the template", mutate: func(rc *ReplicationController) {
			rc.DesiredState.ReplicasInSet["tier"] = "front"
		}, want: []string{`desiredState.taskTemplate.labels: missing the selector's key "tier" (desiredState.replicasInSet wants "front")`}},
		{name: "template without labels", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.Labels = nil
		}, want: []string{`desiredState.taskTemplate.labels: missing the selector's key "name" (desiredState.replicasInSet wants "web")`}},
		{name: "selector value different in the template", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.Labels["name"] = "api"
		}, want: []string{`desiredState.taskTemplate.labels: selector key "name" is "api", desiredState.replicasInSet wants "web"`}},

		// labels
		{name: "label key with a DNS prefix", mutate: func(rc *ReplicationController) { rc.Labels["example.com/team"] = "a" }},
		{name: "label value empty", mutate: func(rc *ReplicationController) { rc.Labels["canary"] = "" }},
		{name: "label value of 63 characters", mutate: func(rc *ReplicationController) { rc.Labels["v"] = strings.Repeat("v", 63) }},
		{name: "label value of 64 characters", mutate: func(rc *ReplicationController) { rc.Labels["v"] = strings.Repeat("v", 64) },
			want: []string{`labels["v"]: invalid value: must be no more than 63 bytes`}},
		{name: "label key with a space", mutate: func(rc *ReplicationController) { rc.Labels["bad key"] = "a" },
			want: []string{`labels["bad key"]: invalid key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{name: "label key empty", mutate: func(rc *ReplicationController) { rc.Labels[""] = "a" },
			want: []string{`labels[""]: invalid key: name part must be non-empty`,
				`labels[""]: invalid key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{name: "selector value with a space", mutate: func(rc *ReplicationController) {
			rc.DesiredState.ReplicasInSet["name"] = "a b"
			rc.DesiredState.TaskTemplate.Labels["name"] = "a b"
		}, want: []string{
			`desiredState.replicasInSet["name"]: invalid value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			`desiredState.taskTemplate.labels["name"]: invalid value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		}},
		{name: "the controller label in labels", mutate: func(rc *ReplicationController) { rc.Labels[LabelController] = "web" },
			want: []string{`labels["replicationController"]: key uses the reserved prefix "replicationController"`}},
		{name: "the slot label in the template", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.Labels[LabelSlot] = "1"
		}, want: []string{`desiredState.taskTemplate.labels["replicationController.slot"]: key uses the reserved prefix "replicationController"`}},
		{name: "a Docker label in the selector and template", mutate: func(rc *ReplicationController) {
			rc.DesiredState.ReplicasInSet["com.docker.compose.project"] = "web"
			rc.DesiredState.TaskTemplate.Labels["com.docker.compose.project"] = "web"
		}, want: []string{
			`desiredState.replicasInSet["com.docker.compose.project"]: key uses the reserved prefix "com.docker."`,
			`desiredState.taskTemplate.labels["com.docker.compose.project"]: key uses the reserved prefix "com.docker."`,
		}},
		{name: "io.docker. and org.dockerproject. labels", mutate: func(rc *ReplicationController) {
			rc.Labels["io.docker.x"] = "a"
			rc.Labels["org.dockerproject.x"] = "a"
		}, want: []string{
			`labels["io.docker.x"]: key uses the reserved prefix "io.docker."`,
			`labels["org.dockerproject.x"]: key uses the reserved prefix "org.dockerproject."`,
		}},
		{name: "a label that only resembles a reserved prefix", mutate: func(rc *ReplicationController) { rc.Labels["com.dockerx"] = "a" }},

		// manifest
		{name: "manifest version empty", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.DesiredState.Manifest.Version = ""
		}},
		{name: "manifest version unknown", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.DesiredState.Manifest.Version = "v1"
		}, want: []string{`desiredState.taskTemplate.desiredState.manifest.version: must be empty or "v1beta1", got "v1"`}},
		{name: "no container", mutate: func(rc *ReplicationController) {
			rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers = nil
		}, want: []string{"desiredState.taskTemplate.desiredState.manifest.containers: must hold 1 to 16 containers, got 0"}},
		{name: "two containers, each checked", mutate: func(rc *ReplicationController) {
			m := &rc.DesiredState.TaskTemplate.DesiredState.Manifest
			m.Containers = append(m.Containers, Container{Name: "sidecar"})
		}, want: []string{
			"desiredState.taskTemplate.desiredState.manifest.containers[1].image: required",
		}},

		// container name and image
		{name: "container name unset", mutate: func(rc *ReplicationController) { container0(rc).Name = "" }},
		{name: "container name with capitals", mutate: func(rc *ReplicationController) { container0(rc).Name = "Web" },
			want: []string{c0 + ".name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		{name: "image missing", mutate: func(rc *ReplicationController) { container0(rc).Image = "" },
			want: []string{c0 + ".image: required"}},
		{name: "image with a registry, path and tag", mutate: func(rc *ReplicationController) { container0(rc).Image = "localhost:5000/team/demo-task:1.2" }},
		{name: "image by digest", mutate: func(rc *ReplicationController) {
			container0(rc).Image = "demo-task@sha256:" + strings.Repeat("a", 64)
		}},
		{name: "image with capitals", mutate: func(rc *ReplicationController) { container0(rc).Image = "Demo-task" },
			want: []string{c0 + `.image: invalid image reference "Demo-task": invalid reference format: repository name (library/Demo-task) must be lowercase`}},
		{name: "image with a space", mutate: func(rc *ReplicationController) { container0(rc).Image = "demo task" },
			want: []string{c0 + `.image: invalid image reference "demo task": invalid reference format`}},

		// imagePullPolicy
		{name: "pull policy Always", mutate: func(rc *ReplicationController) { container0(rc).ImagePullPolicy = PullAlways }},
		{name: "pull policy Never", mutate: func(rc *ReplicationController) { container0(rc).ImagePullPolicy = PullNever }},
		{name: "pull policy IfNotPresent", mutate: func(rc *ReplicationController) { container0(rc).ImagePullPolicy = PullIfNotPresent }},
		{name: "pull policy misspelt", mutate: func(rc *ReplicationController) { container0(rc).ImagePullPolicy = "always" },
			want: []string{c0 + `.imagePullPolicy: must be IfNotPresent, Always or Never, got "always"`}},

		// command and workingDir
		{name: "command with an empty argument", mutate: func(rc *ReplicationController) { container0(rc).Command = Command{"echo", ""} },
			want: []string{c0 + ".command[1]: must not be empty"}},
		{name: "command unset", mutate: func(rc *ReplicationController) { container0(rc).Command = nil }},
		{name: "workingDir absolute", mutate: func(rc *ReplicationController) { container0(rc).WorkingDir = "/srv" }},
		{name: "workingDir relative", mutate: func(rc *ReplicationController) { container0(rc).WorkingDir = "srv" },
			want: []string{c0 + `.workingDir: must be an absolute path, got "srv"`}},

		// ports
		{name: "containerPort 0", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].ContainerPort = 0 },
			want: []string{c0 + ".ports[0].containerPort: must be between 1 and 65535, got 0"}},
		{name: "containerPort -1", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].ContainerPort = -1 },
			want: []string{c0 + ".ports[0].containerPort: must be between 1 and 65535, got -1"}},
		{name: "containerPort 1", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].ContainerPort = 1 }},
		{name: "containerPort 65535", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].ContainerPort = 65535 }},
		{name: "containerPort 65536", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].ContainerPort = 65536 },
			want: []string{c0 + ".ports[0].containerPort: must be between 1 and 65535, got 65536"}},
		{name: "hostPort -1", opts: allowHostPorts, mutate: func(rc *ReplicationController) { container0(rc).Ports[0].HostPort = -1 },
			want: []string{c0 + ".ports[0].hostPort: must be between 0 and 65535, got -1"}},
		{name: "hostPort 65535", opts: allowHostPorts, mutate: func(rc *ReplicationController) {
			rc.DesiredState.Replicas = 1
			container0(rc).Ports[0].HostPort = 65535
		}},
		{name: "hostPort 65536", opts: allowHostPorts, mutate: func(rc *ReplicationController) { container0(rc).Ports[0].HostPort = 65536 },
			want: []string{c0 + ".ports[0].hostPort: must be between 0 and 65535, got 65536"}},
		{name: "protocol udp in lower case", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].Protocol = "udp" }},
		{name: "protocol unset", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].Protocol = "" }},
		{name: "protocol SCTP", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].Protocol = "SCTP" },
			want: []string{c0 + `.ports[0].protocol: must be "TCP" or "UDP", got "SCTP"`}},
		{name: "protocol in mixed case", mutate: func(rc *ReplicationController) { container0(rc).Ports[0].Protocol = "Tcp" },
			want: []string{c0 + `.ports[0].protocol: must be "TCP" or "UDP", got "Tcp"`}},
		{name: "one host port twice, protocol unset meaning TCP", opts: allowHostPorts, mutate: func(rc *ReplicationController) {
			rc.DesiredState.Replicas = 1
			container0(rc).Ports = []Port{
				{ContainerPort: 80, HostPort: 8080, Protocol: "TCP"},
				{ContainerPort: 81, HostPort: 8080},
			}
		}, want: []string{c0 + ".ports[1].hostPort: host port 8080/TCP is already published by " + c0 + ".ports[0]"}},
		{name: "one host port for TCP and for UDP", opts: allowHostPorts, mutate: func(rc *ReplicationController) {
			rc.DesiredState.Replicas = 1
			container0(rc).Ports = []Port{
				{ContainerPort: 53, HostPort: 5353, Protocol: "tcp"},
				{ContainerPort: 53, HostPort: 5353, Protocol: "UDP"},
			}
		}},
		{name: "several unpublished ports", mutate: func(rc *ReplicationController) {
			container0(rc).Ports = []Port{{ContainerPort: 80}, {ContainerPort: 81}}
		}},

		// env: messages name the variable, never its value
		{name: "env name empty", mutate: func(rc *ReplicationController) { container0(rc).Env[0].Name = "" },
			want: []string{c0 + ".env[0].name: required"}},
		{name: "env name with '='", mutate: func(rc *ReplicationController) { container0(rc).Env[0].Name = "TOKEN=" + secret },
			want: []string{c0 + `.env[0].name: must not contain '='`}},
		{name: "env name twice", mutate: func(rc *ReplicationController) {
			c := container0(rc)
			c.Env = append(c.Env, EnvVar{Name: "MODE", Value: "x"}, EnvVar{Name: "TOKEN", Value: secret})
		}, want: []string{c0 + `.env[2].name: duplicate name "TOKEN", first set by ` + c0 + ".env[0]"}},

		// memory and cpu
		{name: "memory 0, no limit", mutate: func(rc *ReplicationController) { container0(rc).Memory = 0 }},
		{name: "memory at Docker's minimum", mutate: func(rc *ReplicationController) { container0(rc).Memory = 6291456 }},
		{name: "memory below Docker's minimum", mutate: func(rc *ReplicationController) { container0(rc).Memory = 6291455 },
			want: []string{c0 + ".memory: must be 0 (no limit) or at least 6291456 bytes (6 MiB), got 6291455"}},
		{name: "memory -1", mutate: func(rc *ReplicationController) { container0(rc).Memory = -1 },
			want: []string{c0 + ".memory: must be 0 (no limit) or at least 6291456 bytes (6 MiB), got -1"}},
		{name: "cpu 0", mutate: func(rc *ReplicationController) { container0(rc).CPU = 0 }},
		{name: "cpu -1", mutate: func(rc *ReplicationController) { container0(rc).CPU = -1 },
			want: []string{c0 + ".cpu: must not be negative, got -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			tt.mutate(rc)
			err := Validate(rc, tt.opts)
			got := fieldErrorStrings(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("error message shows an env value: %v", err)
			}
		})
	}
}

// fieldErrorStrings returns the problems listed by a Validate error, or nil
// for nil.
func fieldErrorStrings(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if len(verr.Errors) == 0 {
		t.Fatalf("ValidationError without errors")
	}
	var got []string
	for _, fe := range verr.Errors {
		got = append(got, fe.Error())
	}
	return got
}

func TestValidateListsEveryProblem(t *testing.T) {
	rc := validWeb()
	rc.ID = "-web"
	rc.DesiredState.Replicas = -1
	rc.DesiredState.TaskTemplate.Labels["name"] = "api"
	c := container0(rc)
	c.Image = ""
	c.Ports[0].ContainerPort = 0
	c.Memory = 1024

	err := Validate(rc, ValidateOptions{Key: "/registry/controllers/web"})
	want := `id: must consist of letters, digits, '_', '.' or '-' and start with a letter or digit, got "-web"; ` +
		`id: must equal the last segment of its key "web", got "-web"; ` +
		"desiredState.replicas: must be between 0 and 1000, got -1; " +
		`desiredState.taskTemplate.labels: selector key "name" is "api", desiredState.replicasInSet wants "web"; ` +
		c0 + ".image: required; " +
		c0 + ".ports[0].containerPort: must be between 1 and 65535, got 0; " +
		c0 + ".memory: must be 0 (no limit) or at least 6291456 bytes (6 MiB), got 1024"
	if err == nil {
		t.Fatal("Validate: no error")
	}
	if got := err.Error(); got != want {
		t.Errorf("Validate:\n got %s\nwant %s", got, want)
	}
	if n := len(fieldErrorStrings(t, err)); n != 7 {
		t.Errorf("Validate listed %d problems, want 7", n)
	}
}

func TestValidateOrdersLabelProblemsByKey(t *testing.T) {
	rc := validWeb()
	for _, k := range []string{"z.docker", "com.docker.b", "com.docker.a", "io.docker.c"} {
		rc.Labels[k] = "x"
	}
	want := []string{
		`labels["com.docker.a"]: key uses the reserved prefix "com.docker."`,
		`labels["com.docker.b"]: key uses the reserved prefix "com.docker."`,
		`labels["io.docker.c"]: key uses the reserved prefix "io.docker."`,
	}
	for range 20 { // map order differs between runs; the listing must not
		if got := fieldErrorStrings(t, Validate(rc, ValidateOptions{})); !reflect.DeepEqual(got, want) {
			t.Fatalf("Validate:\n got %q\nwant %q", got, want)
		}
	}
}

func TestValidateShortensLongValues(t *testing.T) {
	rc := validWeb()
	container0(rc).WorkingDir = strings.Repeat("é", 100) // 200 bytes
	got := fieldErrorStrings(t, Validate(rc, ValidateOptions{}))
	want := []string{c0 + `.workingDir: must be an absolute path, got "` + strings.Repeat("é", 40) + `..."`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Validate:\n got %q\nwant %q", got, want)
	}
}

func TestValidateNil(t *testing.T) {
	if got, want := fieldErrorStrings(t, Validate(nil, ValidateOptions{})), []string{"no controller"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Validate(nil) = %q, want %q", got, want)
	}
}

func TestValidateDoesNotModifyTheSpec(t *testing.T) {
	rc := validWeb()
	rc.DesiredState.Replicas = -1
	container0(rc).Ports[0].Protocol = ""
	want, err := Encode(rc)
	if err != nil {
		t.Fatal(err)
	}
	_ = Validate(rc, ValidateOptions{Key: "web"}) // the error is not what this test is about
	got, err := Encode(rc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("Validate changed the spec:\n got %s\nwant %s", got, want)
	}
}

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"name": "web", "tier": "front", LabelController: "web"}
	tests := []struct {
		name     string
		selector map[string]string
		labels   map[string]string
		want     bool
	}{
		{"one pair present", map[string]string{"name": "web"}, labels, true},
		{"every pair present", map[string]string{"name": "web", "tier": "front"}, labels, true},
		{"a value differs", map[string]string{"name": "api"}, labels, false},
		{"a key is missing", map[string]string{"name": "web", "zone": "a"}, labels, false},
		{"empty value matches only an empty value", map[string]string{"canary": ""}, labels, false},
		{"empty value present", map[string]string{"canary": ""}, map[string]string{"canary": ""}, true},
		{"nil labels", map[string]string{"name": "web"}, nil, false},
		{"empty selector matches nothing", map[string]string{}, labels, false},
		{"nil selector matches nothing", nil, labels, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectorMatches(tt.selector, tt.labels); got != tt.want {
				t.Errorf("SelectorMatches(%v, %v) = %v, want %v", tt.selector, tt.labels, got, tt.want)
			}
		})
	}
}

func TestTemplateHash(t *testing.T) {
	// the example as it was when the hash below was fixed: with cpu 512,
	// which the example has since dropped (it reserved half a CPU a replica)
	template := func() *TaskTemplate {
		tmpl := &webController().DesiredState.TaskTemplate
		tmpl.DesiredState.Manifest.Containers[0].CPU = 512
		return tmpl
	}
	base := TemplateHash(template())

	t.Run("is a short label value", func(t *testing.T) {
		if !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(base) {
			t.Errorf("TemplateHash = %q, want 10 lowercase hex digits", base)
		}
	})
	t.Run("is stable across releases", func(t *testing.T) {
		// Changing this value makes every manager replace every container
		// it runs after an upgrade: only change it on purpose. It is the
		// start of the SHA-256 of
		// {"labels":{"name":"web"},"desiredState":{"manifest":{"version":"v1beta1","containers":[{"name":"web","image":"demo-task:latest","command":["/task","--listen",":8080"],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"env":[{"name":"MODE","value":"demo"}],"memory":67108864,"cpu":512}]}}}
		if want := "97c7f65b61"; base != want {
			t.Errorf("TemplateHash of the example = %q, want %q", base, want)
		}
	})
	t.Run("ignores map insertion order", func(t *testing.T) {
		a, b := template(), template()
		a.Labels = map[string]string{"a": "1", "b": "2", "c": "3"}
		b.Labels = map[string]string{"c": "3", "b": "2", "a": "1"}
		if TemplateHash(a) != TemplateHash(b) {
			t.Errorf("hashes differ for equal labels")
		}
	})
	t.Run("ignores how the command was written", func(t *testing.T) {
		var fromString, fromArray Command
		if err := fromString.UnmarshalJSON([]byte(`"/task --listen :8080"`)); err != nil {
			t.Fatal(err)
		}
		if err := fromArray.UnmarshalJSON([]byte(`["/task", "--listen", ":8080"]`)); err != nil {
			t.Fatal(err)
		}
		a, b := template(), template()
		a.DesiredState.Manifest.Containers[0].Command = fromString
		b.DesiredState.Manifest.Containers[0].Command = fromArray
		if TemplateHash(a) != TemplateHash(b) {
			t.Errorf("hashes differ for the same command as a string and as an array")
		}
	})
	changes := []struct {
		name   string
		mutate func(*TaskTemplate)
	}{
		{"image", func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[0].Image = "demo-task:v2" }},
		{"env value", func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[0].Env[0].Value = "prod" }},
		{"command", func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[0].Command = Command{"/task"} }},
		{"label", func(tt *TaskTemplate) { tt.Labels["tier"] = "front" }},
		{"memory", func(tt *TaskTemplate) { tt.DesiredState.Manifest.Containers[0].Memory++ }},
	}
	for _, c := range changes {
		t.Run("changes with the "+c.name, func(t *testing.T) {
			tt := template()
			c.mutate(tt)
			if got := TemplateHash(tt); got == base {
				t.Errorf("TemplateHash = %q after changing the %s, same as before", got, c.name)
			}
		})
	}
}
