package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// healthCheck is a valid health check of the demo image.
func healthCheck() *HealthCheck {
	return &HealthCheck{
		Test:        Command{"CMD", "/task", "healthcheck"},
		Interval:    Duration(2 * time.Second),
		Timeout:     Duration(3 * time.Second),
		Retries:     3,
		StartPeriod: Duration(5 * time.Second),
	}
}

func TestValidateHealthCheck(t *testing.T) {
	const hc = c0 + ".healthCheck"
	tests := []struct {
		name   string
		mutate func(h *HealthCheck)
		want   []string // nil: valid
	}{
		{name: "every field", mutate: func(*HealthCheck) {}},
		{name: "only a test", mutate: func(h *HealthCheck) { *h = HealthCheck{Test: Command{"/task", "healthcheck"}} }},

		// test
		{name: "test missing", mutate: func(h *HealthCheck) { h.Test = nil },
			want: []string{hc + `.test: required (["NONE"] disables the image's health check)`}},
		{name: "test empty", mutate: func(h *HealthCheck) { h.Test = Command{} },
			want: []string{hc + `.test: required (["NONE"] disables the image's health check)`}},
		{name: "test NONE", mutate: func(h *HealthCheck) { h.Test = Command{"NONE"} }},
		{name: "test NONE with arguments", mutate: func(h *HealthCheck) { h.Test = Command{"NONE", "x"} },
			want: []string{hc + `.test: "NONE" takes no arguments, got 1`}},
		{name: "test CMD alone", mutate: func(h *HealthCheck) { h.Test = Command{"CMD"} },
			want: []string{hc + `.test: "CMD" needs a command after it`}},
		{name: "test CMD-SHELL with one command", mutate: func(h *HealthCheck) { h.Test = Command{"CMD-SHELL", "curl -f http://localhost/"} }},
		{name: "test CMD-SHELL alone", mutate: func(h *HealthCheck) { h.Test = Command{"CMD-SHELL"} },
			want: []string{hc + `.test: "CMD-SHELL" takes one argument, the shell command, got 0 (write test as an array to keep the spaces: ["CMD-SHELL", "curl -f http://localhost/"])`}},
		{name: "test CMD-SHELL split on spaces", mutate: func(h *HealthCheck) { h.Test = Command{"CMD-SHELL", "curl", "-f", "x"} },
			want: []string{hc + `.test: "CMD-SHELL" takes one argument, the shell command, got 3 (write test as an array to keep the spaces: ["CMD-SHELL", "curl -f http://localhost/"])`}},
		{name: "test with an empty argument", mutate: func(h *HealthCheck) { h.Test = Command{"CMD", "/task", ""} },
			want: []string{hc + ".test[2]: must not be empty"}},
		{name: "test in lower case is a program", mutate: func(h *HealthCheck) { h.Test = Command{"none"} }},

		// durations
		{name: "interval 0, the default", mutate: func(h *HealthCheck) { h.Interval = 0 }},
		{name: "interval 1ms, Docker's minimum", mutate: func(h *HealthCheck) { h.Interval = Duration(time.Millisecond) }},
		{name: "interval just under 1ms", mutate: func(h *HealthCheck) { h.Interval = Duration(time.Millisecond - 1) },
			want: []string{hc + ".interval: must be 0 (the default) or at least 1ms, got 999.999µs"}},
		{name: "interval 1ns", mutate: func(h *HealthCheck) { h.Interval = 1 },
			want: []string{hc + ".interval: must be 0 (the default) or at least 1ms, got 1ns"}},
		{name: "interval negative", mutate: func(h *HealthCheck) { h.Interval = Duration(-time.Second) },
			want: []string{hc + ".interval: must be 0 (the default) or at least 1ms, got -1s"}},
		{name: "timeout 1ms", mutate: func(h *HealthCheck) { h.Timeout = Duration(time.Millisecond) }},
		{name: "timeout under 1ms", mutate: func(h *HealthCheck) { h.Timeout = Duration(500 * time.Microsecond) },
			want: []string{hc + ".timeout: must be 0 (the default) or at least 1ms, got 500µs"}},
		{name: "timeout negative", mutate: func(h *HealthCheck) { h.Timeout = -1 },
			want: []string{hc + ".timeout: must be 0 (the default) or at least 1ms, got -1ns"}},
		{name: "startPeriod 0", mutate: func(h *HealthCheck) { h.StartPeriod = 0 }},
		{name: "startPeriod 1ms", mutate: func(h *HealthCheck) { h.StartPeriod = Duration(time.Millisecond) }},
		{name: "startPeriod under 1ms", mutate: func(h *HealthCheck) { h.StartPeriod = Duration(time.Microsecond) },
			want: []string{hc + ".startPeriod: must be 0 (the default) or at least 1ms, got 1µs"}},
		{name: "startPeriod negative", mutate: func(h *HealthCheck) { h.StartPeriod = Duration(-time.Minute) },
			want: []string{hc + ".startPeriod: must be 0 (the default) or at least 1ms, got -1m0s"}},

		// retries
		{name: "retries 0, the default", mutate: func(h *HealthCheck) { h.Retries = 0 }},
		{name: "retries 1", mutate: func(h *HealthCheck) { h.Retries = 1 }},
		{name: "retries -1", mutate: func(h *HealthCheck) { h.Retries = -1 },
			want: []string{hc + ".retries: must not be negative, got -1"}},

		// onUnhealthy
		{name: "onUnhealthy ignore", mutate: func(h *HealthCheck) { h.OnUnhealthy = OnUnhealthyIgnore }},
		{name: "onUnhealthy replace", mutate: func(h *HealthCheck) { h.OnUnhealthy = OnUnhealthyReplace }},
		{name: "onUnhealthy unknown", mutate: func(h *HealthCheck) { h.OnUnhealthy = "restart" },
			want: []string{hc + `.onUnhealthy: must be "ignore" (the default) or "replace", got "restart"`}},
		{name: "onUnhealthy replace with the check disabled", mutate: func(h *HealthCheck) {
			h.Test, h.OnUnhealthy = Command{"NONE"}, OnUnhealthyReplace
		}, want: []string{hc + `.onUnhealthy: "replace" needs a health check, and the test is "NONE"`}},

		{name: "every problem at once", mutate: func(h *HealthCheck) {
			*h = HealthCheck{Interval: -1, Timeout: -1, Retries: -1, StartPeriod: -1}
		}, want: []string{
			hc + `.test: required (["NONE"] disables the image's health check)`,
			hc + ".interval: must be 0 (the default) or at least 1ms, got -1ns",
			hc + ".timeout: must be 0 (the default) or at least 1ms, got -1ns",
			hc + ".startPeriod: must be 0 (the default) or at least 1ms, got -1ns",
			hc + ".retries: must not be negative, got -1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			h := healthCheck()
			tt.mutate(h)
			container0(rc).HealthCheck = h
			got := fieldErrorStrings(t, Validate(rc, ValidateOptions{}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestHealthCheckExplicitTest(t *testing.T) {
	tests := []struct {
		test         Command
		want         []string
		wantDisabled bool
	}{
		{Command{"/task", "healthcheck"}, []string{"CMD", "/task", "healthcheck"}, false},
		{Command{"CMD", "/task", "healthcheck"}, []string{"CMD", "/task", "healthcheck"}, false},
		{Command{"CMD-SHELL", "curl -f localhost"}, []string{"CMD-SHELL", "curl -f localhost"}, false},
		{Command{"NONE"}, []string{"NONE"}, true},
		{Command{"none"}, []string{"CMD", "none"}, false}, // Docker's words are in capitals
		{nil, nil, false},
	}
	for _, tt := range tests {
		h := &HealthCheck{Test: tt.test}
		got := h.ExplicitTest()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ExplicitTest of %q: got %q, want %q", tt.test, got, tt.want)
		}
		if len(got) > 0 {
			got[len(got)-1] = "changed"
			if tt.test[len(tt.test)-1] == "changed" {
				t.Errorf("ExplicitTest of %q shares its slice with the spec", tt.test)
			}
		}
		if d := h.Disabled(); d != tt.wantDisabled {
			t.Errorf("Disabled of %q: got %v, want %v", tt.test, d, tt.wantDisabled)
		}
	}
	var none *HealthCheck
	if none.ExplicitTest() != nil || none.Disabled() {
		t.Error("a nil health check has a test or is disabled; want neither (the image's applies)")
	}
}

func TestDecodeHealthCheck(t *testing.T) {
	const spec = `{"id": "web", "desiredState": {"taskTemplate": {"desiredState": {"manifest": {"containers": [{
	  "image": "demo-task", "healthCheck": %s}]}}}}}`
	decode := func(t *testing.T, healthCheck string) *HealthCheck {
		t.Helper()
		rc, err := Decode([]byte(strings.Replace(spec, "%s", healthCheck, 1)))
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		return container0(rc).HealthCheck
	}
	tests := []struct {
		name, input string
		want        *HealthCheck
	}{
		{"the brief's example", `{"test": ["CMD", "/task", "healthcheck"], "interval": "2s", "timeout": "3s", "retries": 3, "startPeriod": "5s"}`,
			healthCheck()},
		{"test as a string", `{"test": "/task healthcheck"}`, &HealthCheck{Test: Command{"/task", "healthcheck"}}},
		{"fractions and compound durations", `{"test": "NONE", "interval": "1.5s", "timeout": "250ms", "startPeriod": "1m30s"}`,
			&HealthCheck{Test: Command{"NONE"}, Interval: Duration(1500 * time.Millisecond), Timeout: Duration(250 * time.Millisecond),
				StartPeriod: Duration(90 * time.Second)}},
		{"null durations", `{"test": "x", "interval": null}`, &HealthCheck{Test: Command{"x"}}},
		{"empty object", `{}`, &HealthCheck{}},
		{"null", `null`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decode(t, tt.input); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("healthCheck: got %+v, want %+v", got, tt.want)
			}
		})
	}

	const hc = "decode controller: " + c0 + ".healthCheck"
	rejects := []struct {
		name, input, want string
	}{
		{"a number of seconds", `{"test": "x", "interval": 2}`,
			hc + `.interval: cannot unmarshal number into duration string such as "2s"`},
		{"a duration without a unit", `{"test": "x", "timeout": "2"}`,
			hc + `.timeout: invalid duration "2": want a number and a unit, such as "500ms", "2s" or "1m30s"`},
		{"a duration with an unknown unit", `{"test": "x", "startPeriod": "2 days"}`,
			hc + `.startPeriod: invalid duration "2 days": want a number and a unit, such as "500ms", "2s" or "1m30s"`},
		{"a bool", `{"test": "x", "interval": true}`,
			hc + `.interval: cannot unmarshal bool into duration string such as "2s"`},
		{"an object", `{"test": "x", "interval": {"seconds": 2}}`,
			hc + `.interval: cannot unmarshal object into duration string such as "2s"`},
		{"a number as test", `{"test": 1}`,
			hc + `.test: cannot unmarshal number into string or array of strings`},
		{"retries as a string", `{"test": "x", "retries": "3"}`,
			hc + `.retries: cannot unmarshal string into int`},
		{"an unknown field", `{"test": "x", "start_period": "1s"}`,
			`decode controller: unknown field "` + c0 + `.healthCheck.start_period" (did you mean "startPeriod"?)`},
		{"a string", `"/task healthcheck"`,
			hc + `: cannot unmarshal string into object`},
	}
	for _, tt := range rejects {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			_, err := Decode([]byte(strings.Replace(spec, "%s", tt.input, 1)))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestDecodeHealthCheckDurationInYAML(t *testing.T) {
	const spec = "id: web\ndesiredState:\n  taskTemplate:\n    desiredState:\n      manifest:\n        containers:\n" +
		"          - image: demo-task\n            healthCheck:\n              test: /task healthcheck\n              interval: %s\n"
	rc, err := Decode([]byte(strings.Replace(spec, "%s", "1s", 1)))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got, want := container0(rc).HealthCheck.Interval, Duration(time.Second); got != want {
		t.Errorf("interval: got %s, want %s", got, want)
	}
	// A bare YAML number is a number, not a duration.
	_, err = Decode([]byte(strings.Replace(spec, "%s", "30", 1)))
	want := "decode controller: " + c0 + `.healthCheck.interval: cannot unmarshal number into duration string such as "2s"`
	if err == nil || err.Error() != want {
		t.Errorf("interval 30: got %v, want %s", err, want)
	}
}

func TestDurationJSON(t *testing.T) {
	for _, d := range []Duration{Duration(time.Second), Duration(1500 * time.Millisecond), Duration(90 * time.Second), 1, 0} {
		data, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("Marshal(%s): %v", d, err)
		}
		if want := `"` + time.Duration(d).String() + `"`; string(data) != want {
			t.Errorf("Marshal(%s) = %s, want %s", d, data, want)
		}
		var back Duration
		if err := json.Unmarshal(data, &back); err != nil || back != d {
			t.Errorf("Unmarshal(%s) = %s, %v; want %s", data, back, err, d)
		}
	}
	var d Duration
	if err := json.Unmarshal([]byte(`2`), &d); err == nil || !strings.Contains(err.Error(), `a string such as "2s"`) {
		t.Errorf("Unmarshal of a number: got %v, want an error asking for a string", err)
	}
	// A zero duration is left out, so that TemplateHash does not change.
	data, err := json.Marshal(HealthCheck{Test: Command{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"test":["x"]}`; string(data) != want {
		t.Errorf("Marshal of a health check without durations = %s, want %s", data, want)
	}
}

func TestOnUnhealthyChangesTheTemplateHash(t *testing.T) {
	rc := validWeb()
	container0(rc).HealthCheck = healthCheck()
	before := TemplateHash(&rc.DesiredState.TaskTemplate)
	if rc.DesiredState.TaskTemplate.ReplacesUnhealthy() {
		t.Error("a health check without onUnhealthy replaces unhealthy tasks")
	}
	container0(rc).HealthCheck.OnUnhealthy = OnUnhealthyReplace
	if TemplateHash(&rc.DesiredState.TaskTemplate) == before {
		t.Error("onUnhealthy did not change the template hash")
	}
	if !rc.DesiredState.TaskTemplate.ReplacesUnhealthy() {
		t.Error("onUnhealthy: replace does not replace unhealthy tasks")
	}
}
