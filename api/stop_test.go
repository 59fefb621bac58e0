package api

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidateStop(t *testing.T) {
	seconds := func(n int) *int { return &n }
	tests := []struct {
		name   string
		mutate func(c *Container)
		want   []string // nil: valid
	}{
		{name: "none of the fields", mutate: func(*Container) {}},
		{name: "every field", mutate: func(c *Container) {
			c.StopSignal, c.StopGracePeriodSeconds, c.PreStop = "SIGINT", seconds(7), &PreStop{SleepSeconds: 2}
		}},
		{name: "a preStop exec", mutate: func(c *Container) { c.PreStop = &PreStop{Exec: []string{"/task", "drain"}} }},
		{name: "SIGKILL", mutate: func(c *Container) { c.StopSignal = "SIGKILL" }},

		{name: "an unknown signal", mutate: func(c *Container) { c.StopSignal = "SIGFOO" },
			want: []string{c0 + `.stopSignal: unknown signal "SIGFOO": a Linux signal name such as "SIGTERM" or "SIGINT"`}},
		{name: "a signal without its prefix", mutate: func(c *Container) { c.StopSignal = "int" },
			want: []string{c0 + `.stopSignal: unknown signal "int" (did you mean "SIGINT"?): a Linux signal name such as "SIGTERM" or "SIGINT"`}},
		{name: "a signal number", mutate: func(c *Container) { c.StopSignal = "15" },
			want: []string{c0 + `.stopSignal: unknown signal "15": a Linux signal name such as "SIGTERM" or "SIGINT"`}},
		{name: "SIGSTOP, which only pauses", mutate: func(c *Container) { c.StopSignal = "SIGSTOP" },
			want: []string{c0 + `.stopSignal: unknown signal "SIGSTOP": a Linux signal name such as "SIGTERM" or "SIGINT"`}},

		{name: "a grace of 0: a kill at once", mutate: func(c *Container) { c.StopGracePeriodSeconds = seconds(0) }},
		{name: "a grace of an hour", mutate: func(c *Container) { c.StopGracePeriodSeconds = seconds(3600) }},
		{name: "a grace over an hour", mutate: func(c *Container) { c.StopGracePeriodSeconds = seconds(3601) },
			want: []string{c0 + ".stopGracePeriodSeconds: must be between 0 and 3600, got 3601"}},
		{name: "a negative grace", mutate: func(c *Container) { c.StopGracePeriodSeconds = seconds(-1) },
			want: []string{c0 + ".stopGracePeriodSeconds: must be between 0 and 3600, got -1"}},

		{name: "an empty preStop", mutate: func(c *Container) { c.PreStop = &PreStop{} },
			want: []string{c0 + `.preStop: set exactly one of exec (["cmd", "arg"]) and sleepSeconds`}},
		{name: "a preStop of both", mutate: func(c *Container) { c.PreStop = &PreStop{Exec: []string{"/x"}, SleepSeconds: 1} },
			want: []string{c0 + ".preStop: set exactly one of exec and sleepSeconds, got both"}},
		{name: "a negative sleep", mutate: func(c *Container) { c.PreStop = &PreStop{SleepSeconds: -2} },
			want: []string{c0 + ".preStop.sleepSeconds: must be between 1 and 3600, got -2"}},
		{name: "an exec with an empty argument", mutate: func(c *Container) { c.PreStop = &PreStop{Exec: []string{"/x", ""}} },
			want: []string{c0 + ".preStop.exec[1]: must not be empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			tt.mutate(container0(rc))
			got := fieldErrorStrings(t, Validate(rc, ValidateOptions{}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDecodeStop(t *testing.T) {
	const spec = `{"id": "web", "desiredState": {"taskTemplate": {"desiredState": {"manifest": {"containers": [
		{"image": "demo-task", "stopSignal": "SIGINT", "stopGracePeriodSeconds": 0, "preStop": {"exec": ["/task", "drain"]}}]}}}}}`
	rc, err := Decode([]byte(spec))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	c := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	if c.StopSignal != "SIGINT" || c.StopGracePeriodSeconds == nil || *c.StopGracePeriodSeconds != 0 ||
		!reflect.DeepEqual(c.PreStop, &PreStop{Exec: []string{"/task", "drain"}}) {
		t.Errorf("decoded %+v, want SIGINT, a grace of 0 (not none) and the exec", c)
	}
	data, err := Encode(rc)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if !strings.Contains(string(data), `"stopGracePeriodSeconds": 0`) {
		t.Errorf("a grace of 0 is lost in the encoding:\n%s", data)
	}

	_, err = Decode([]byte(strings.Replace(spec, `"stopSignal"`, `"stopSingal"`, 1)))
	want := `unknown field "desiredState.taskTemplate.desiredState.manifest.containers[0].stopSingal" (did you mean "stopSignal"?)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a mistyped field: got %v, want %s", err, want)
	}
}

func TestStopFieldsChangeTheTemplateHash(t *testing.T) {
	rc := validWeb()
	before := TemplateHash(&rc.DesiredState.TaskTemplate)
	container0(rc).PreStop = &PreStop{SleepSeconds: 2}
	if TemplateHash(&rc.DesiredState.TaskTemplate) == before {
		t.Error("a preStop did not change the template hash")
	}
}
