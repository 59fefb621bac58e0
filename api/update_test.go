package api

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestStrategyDefaults(t *testing.T) {
	var ds ReplicationControllerState
	s := ds.Strategy()
	if s.Type != RollingUpdate || s.MaxUnavailable.IntValue() != 1 || s.MaxSurge.IntValue() != 0 || *s.ProgressDeadlineSeconds != 600 || *s.MonitorSeconds != 5 {
		t.Errorf("defaults = %+v, want RollingUpdate, maxUnavailable 1, maxSurge 0, deadline 600, monitor 5", s)
	}
	if surge, unavailable := s.Bounds(10); surge != 0 || unavailable != 1 {
		t.Errorf("default bounds of 10 = %d, %d; want 0, 1", surge, unavailable)
	}
}

func TestBoundsRoundSurgeUpAndUnavailableDown(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt(n); return &v }
	tests := []struct {
		surge, unavailable         *intstr.IntOrString
		replicas                   int
		wantSurge, wantUnavailable int
	}{
		{pct("25%"), pct("25%"), 10, 3, 2},
		{pct("10%"), pct("10%"), 5, 1, 0},
		{num(2), num(0), 3, 2, 0},
		{pct("0%"), pct("10%"), 5, 0, 1}, // both round to 0: one may be unavailable, or nothing moves
		{pct("100%"), num(0), 4, 4, 0},
	}
	for _, tt := range tests {
		s := UpdateStrategy{MaxSurge: tt.surge, MaxUnavailable: tt.unavailable}
		surge, unavailable := s.Bounds(tt.replicas)
		if surge != tt.wantSurge || unavailable != tt.wantUnavailable {
			t.Errorf("Bounds(%s, %s of %d) = %d, %d; want %d, %d", tt.surge, tt.unavailable, tt.replicas, surge, unavailable, tt.wantSurge, tt.wantUnavailable)
		}
	}
}

func TestValidateUpdateStrategy(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"defaults", `{}`, ""},
		{"on delete", `{"type": "OnDelete"}`, ""},
		{"percentages", `{"maxSurge": "25%", "maxUnavailable": "0%"}`, ""},
		{"unknown type", `{"type": "Recreate"}`, `desiredState.updateStrategy.type: must be RollingUpdate or OnDelete, got "Recreate"`},
		{"both zero", `{"maxSurge": 0, "maxUnavailable": 0}`, "desiredState.updateStrategy.maxUnavailable: may not be 0 when maxSurge is 0"},
		{"both zero percent", `{"maxSurge": "0%", "maxUnavailable": "0%"}`, "may not be 0 when maxSurge is 0"},
		{"unavailable 0 with the default surge", `{"maxUnavailable": 0}`, "may not be 0 when maxSurge is 0"},
		{"negative", `{"maxSurge": -1}`, "desiredState.updateStrategy.maxSurge: must not be negative, got -1"},
		{"not a percentage", `{"maxSurge": "a lot"}`, `desiredState.updateStrategy.maxSurge: must be an integer or a percentage from 0% to 100%, got "a lot"`},
		{"over 100%", `{"maxUnavailable": "150%"}`, "desiredState.updateStrategy.maxUnavailable: must be an integer or a percentage"},
		{"deadline", `{"progressDeadlineSeconds": 0}`, "desiredState.updateStrategy.progressDeadlineSeconds: must be at least 1, got 0"},
		{"deadline within minReadySeconds", `{"progressDeadlineSeconds": 5}`, "must be more than desiredState.minReadySeconds (10), got 5"},
		{"rollback", `{"failureAction": "rollback", "maxFailureRatio": 0.5}`, ""},
		{"pause", `{"failureAction": "pause", "maxFailureRatio": 1}`, ""},
		{"unknown failure action", `{"failureAction": "retry"}`, `desiredState.updateStrategy.failureAction: must be pause or rollback, got "retry"`},
		{"failure ratio over 1", `{"maxFailureRatio": 1.5}`, "desiredState.updateStrategy.maxFailureRatio: must be between 0 and 1, got 1.5"},
		{"negative failure ratio", `{"maxFailureRatio": -0.1}`, "desiredState.updateStrategy.maxFailureRatio: must be between 0 and 1, got -0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"id": "web", "desiredState": {"replicas": 2, "minReadySeconds": 10, "replicasInSet": {"name": "web"},
				"updateStrategy": ` + tt.spec + `, "paused": true,
				"taskTemplate": {"labels": {"name": "web"}, "desiredState": {"manifest": {"containers": [{"image": "demo-task:latest"}]}}}}}`
			rc, err := Decode([]byte(doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			err = Validate(rc, ValidateOptions{Key: "web"})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRestartedAtChangesTheTemplateHashAndMustBeATime(t *testing.T) {
	tmpl := TaskTemplate{Labels: map[string]string{"name": "web"}}
	before := TemplateHash(&tmpl)
	tmpl.RestartedAt = "2026-12-01T10:00:00Z"
	if TemplateHash(&tmpl) == before {
		t.Error("restartedAt does not change the template hash")
	}
	rc := &ReplicationController{ID: "web", DesiredState: ReplicationControllerState{
		Replicas: 1, ReplicasInSet: map[string]string{"name": "web"},
		TaskTemplate: TaskTemplate{Labels: map[string]string{"name": "web"}, RestartedAt: "yesterday",
			DesiredState: TaskState{Manifest: ContainerManifest{Containers: []Container{{Image: "demo-task:latest"}}}}},
	}}
	if err := Validate(rc, ValidateOptions{}); err == nil || !strings.Contains(err.Error(), "desiredState.taskTemplate.restartedAt: must be an RFC 3339 time") {
		t.Errorf("Validate = %v, want restartedAt refused", err)
	}
}

func TestStrategyFillsMonitorSecondsWithoutModifyingTheSpec(t *testing.T) {
	deadline := 120
	ds := ReplicationControllerState{UpdateStrategy: &UpdateStrategy{ProgressDeadlineSeconds: &deadline}}
	if s := ds.Strategy(); s.MonitorSeconds == nil || *s.MonitorSeconds != DefaultMonitorSeconds || *s.ProgressDeadlineSeconds != 120 {
		t.Errorf("Strategy() = %+v, want monitorSeconds %d and the deadline kept", s, DefaultMonitorSeconds)
	}
	if ds.UpdateStrategy.MonitorSeconds != nil {
		t.Errorf("Strategy() set monitorSeconds in the spec: %d", *ds.UpdateStrategy.MonitorSeconds)
	}
	monitor := 0
	ds.UpdateStrategy.MonitorSeconds = &monitor
	if s := ds.Strategy(); *s.MonitorSeconds != 0 {
		t.Errorf("Strategy() monitorSeconds = %d, want the 0 given", *s.MonitorSeconds)
	}
}

func TestAvailableAfterIsTheLongerWait(t *testing.T) {
	num := func(n int) *int { return &n }
	for _, tt := range []struct {
		minReady int
		monitor  *int
		want     time.Duration
	}{
		{0, nil, 5 * time.Second}, // the default monitor
		{3, nil, 5 * time.Second},
		{10, nil, 10 * time.Second},
		{3, num(8), 8 * time.Second},
		{30, num(8), 30 * time.Second},
		{0, num(0), 0},
		{7, num(0), 7 * time.Second},
		{MaxMinReadySeconds, num(MaxMonitorSeconds), 24 * time.Hour},
		{-1, num(0), 0},                      // invalid: counts as 0
		{math.MaxInt, nil, math.MaxInt64},    // invalid: saturates rather than overflowing
		{0, num(math.MaxInt), math.MaxInt64}, // likewise
	} {
		ds := ReplicationControllerState{MinReadySeconds: tt.minReady}
		if tt.monitor != nil {
			ds.UpdateStrategy = &UpdateStrategy{MonitorSeconds: tt.monitor}
		}
		if got := ds.AvailableAfter(); got != tt.want {
			monitor := "unset"
			if tt.monitor != nil {
				monitor = strconv.Itoa(*tt.monitor)
			}
			t.Errorf("AvailableAfter(minReadySeconds %d, monitorSeconds %s) = %s, want %s", tt.minReady, monitor, got, tt.want)
		}
	}
}

// TestValidateCapsWaitsAndHostPortSurge checks the bounds of the fields in
// seconds, the progress deadline against AvailableAfter and the refusal of
// a surge with a host port, each with its exact message.
func TestValidateCapsWaitsAndHostPortSurge(t *testing.T) {
	const (
		ps = "desiredState.updateStrategy"
		hp = "desiredState.taskTemplate.desiredState.manifest.containers[0].ports[0].hostPort"
	)
	num := func(n int) *int { return &n }
	surge := func(x intstr.IntOrString) func(*UpdateStrategy) {
		return func(s *UpdateStrategy) { s.MaxSurge = &x }
	}
	strategy := func(mutate ...func(*UpdateStrategy)) func(*ReplicationController) {
		return func(rc *ReplicationController) {
			s := &UpdateStrategy{}
			for _, m := range mutate {
				m(s)
			}
			rc.DesiredState.UpdateStrategy = s
		}
	}
	monitor := func(n int) func(*UpdateStrategy) { return func(s *UpdateStrategy) { s.MonitorSeconds = num(n) } }
	deadline := func(n int) func(*UpdateStrategy) {
		return func(s *UpdateStrategy) { s.ProgressDeadlineSeconds = num(n) }
	}
	minReady := func(n int) func(*ReplicationController) {
		return func(rc *ReplicationController) { rc.DesiredState.MinReadySeconds = n }
	}
	hostPort := func(rc *ReplicationController) { container0(rc).Ports[0].HostPort = 18080 }
	onDelete := func(s *UpdateStrategy) { s.Type = OnDelete }
	surgeMsg := ps + ".maxSurge: must be 0 when a container publishes a host port (" + hp +
		"): the successor is started before the old container stops and could not bind it"

	tests := []struct {
		name   string
		mutate []func(*ReplicationController)
		want   []string // nil: valid
	}{
		// monitorSeconds
		{"monitorSeconds 0", []func(*ReplicationController){strategy(monitor(0))}, nil},
		{"monitorSeconds 30", []func(*ReplicationController){strategy(monitor(30))}, nil},
		{"monitorSeconds at its cap, with a deadline above it", []func(*ReplicationController){strategy(monitor(MaxMonitorSeconds), deadline(MaxMonitorSeconds+1))}, nil},
		{"monitorSeconds -1", []func(*ReplicationController){strategy(monitor(-1))},
			[]string{ps + ".monitorSeconds: must not be negative, got -1"}},
		{"monitorSeconds over its cap", []func(*ReplicationController){strategy(monitor(MaxMonitorSeconds + 1))},
			[]string{ps + ".monitorSeconds: must be at most 86400 (one day), got 86401"}},
		{"monitorSeconds huge", []func(*ReplicationController){strategy(monitor(math.MaxInt))},
			[]string{ps + ".monitorSeconds: must be at most 86400 (one day), got " + strconv.Itoa(math.MaxInt)}},

		// minReadySeconds
		{"minReadySeconds at its cap, with a deadline above it", []func(*ReplicationController){minReady(MaxMinReadySeconds), strategy(deadline(MaxMinReadySeconds + 1))}, nil},
		{"minReadySeconds over its cap", []func(*ReplicationController){minReady(MaxMinReadySeconds + 1)},
			[]string{"desiredState.minReadySeconds: must be at most 86400 (one day), got 86401"}},
		{"minReadySeconds huge", []func(*ReplicationController){minReady(math.MaxInt)},
			[]string{"desiredState.minReadySeconds: must be at most 86400 (one day), got " + strconv.Itoa(math.MaxInt)}},

		// progressDeadlineSeconds: its range
		{"deadline at its cap", []func(*ReplicationController){strategy(deadline(MaxProgressDeadlineSeconds))}, nil},
		{"deadline over its cap", []func(*ReplicationController){strategy(deadline(MaxProgressDeadlineSeconds + 1))},
			[]string{ps + ".progressDeadlineSeconds: must be at most 2592000 (30 days), got 2592001"}},
		{"deadline huge", []func(*ReplicationController){strategy(deadline(math.MaxInt))},
			[]string{ps + ".progressDeadlineSeconds: must be at most 2592000 (30 days), got " + strconv.Itoa(math.MaxInt)}},
		{"deadline 0", []func(*ReplicationController){strategy(deadline(0))},
			[]string{ps + ".progressDeadlineSeconds: must be at least 1, got 0"}},

		// progressDeadlineSeconds given: more than the longer wait
		{"deadline above the default monitor", []func(*ReplicationController){strategy(deadline(6))}, nil},
		{"deadline within the default monitor", []func(*ReplicationController){strategy(deadline(5))},
			[]string{ps + ".progressDeadlineSeconds: must be more than " + ps + ".monitorSeconds (5 by default), got 5"}},
		{"deadline 1 with no wait at all", []func(*ReplicationController){strategy(monitor(0), deadline(1))}, nil},
		{"deadline within monitorSeconds", []func(*ReplicationController){minReady(10), strategy(monitor(30), deadline(20))},
			[]string{ps + ".progressDeadlineSeconds: must be more than " + ps + ".monitorSeconds (30), got 20"}},
		{"deadline equal to monitorSeconds", []func(*ReplicationController){strategy(monitor(30), deadline(30))},
			[]string{ps + ".progressDeadlineSeconds: must be more than " + ps + ".monitorSeconds (30), got 30"}},
		{"deadline within minReadySeconds, the longer wait", []func(*ReplicationController){minReady(30), strategy(monitor(10), deadline(20))},
			[]string{ps + ".progressDeadlineSeconds: must be more than desiredState.minReadySeconds (30), got 20"}},
		{"deadline above both waits", []func(*ReplicationController){minReady(30), strategy(monitor(40), deadline(41))}, nil},
		{"no comparison with an invalid minReadySeconds", []func(*ReplicationController){minReady(-1), strategy(deadline(1))},
			[]string{"desiredState.minReadySeconds: must not be negative, got -1"}},

		// progressDeadlineSeconds left out: its default grows with the wait
		{"default deadline above minReadySeconds", []func(*ReplicationController){minReady(599)}, nil},
		{"default deadline with a long minReadySeconds", []func(*ReplicationController){minReady(600)}, nil},
		{"default deadline with a long monitorSeconds", []func(*ReplicationController){strategy(monitor(900))}, nil},
		{"default deadline within minReadySeconds under OnDelete, which never uses it", []func(*ReplicationController){minReady(600), strategy(onDelete)}, nil},
		{"deadline given within minReadySeconds under OnDelete", []func(*ReplicationController){minReady(600), strategy(onDelete, deadline(600))},
			[]string{ps + ".progressDeadlineSeconds: must be more than desiredState.minReadySeconds (600), got 600"}},
		{"default deadline, a long wait and a deadline above it", []func(*ReplicationController){minReady(700), strategy(deadline(701))}, nil},

		// a host port and a surge
		{"host port without a surge", []func(*ReplicationController){hostPort}, nil},
		{"host port with maxSurge 0", []func(*ReplicationController){hostPort, strategy(surge(intstr.FromInt(0)))}, nil},
		{"host port with maxSurge 0%", []func(*ReplicationController){hostPort, strategy(surge(intstr.FromString("0%")))}, nil},
		{"host port with maxSurge 1", []func(*ReplicationController){hostPort, strategy(surge(intstr.FromInt(1)))},
			[]string{surgeMsg}},
		{"host port with maxSurge 25%", []func(*ReplicationController){hostPort, strategy(surge(intstr.FromString("25%")))},
			[]string{surgeMsg}},
		{"host port with a surge, for no replicas", []func(*ReplicationController){hostPort, func(rc *ReplicationController) { rc.DesiredState.Replicas = 0 },
			strategy(surge(intstr.FromString("1%")))},
			[]string{surgeMsg}},
		{"host port of the second port with a surge", []func(*ReplicationController){func(rc *ReplicationController) {
			container0(rc).Ports = []Port{{ContainerPort: 8080}, {ContainerPort: 9090, HostPort: 19090}}
		}, strategy(surge(intstr.FromInt(1)))},
			[]string{ps + ".maxSurge: must be 0 when a container publishes a host port (desiredState.taskTemplate.desiredState.manifest.containers[0].ports[1].hostPort): the successor is started before the old container stops and could not bind it"}},
		{"host port with a surge under OnDelete, which never surges", []func(*ReplicationController){hostPort, strategy(onDelete, surge(intstr.FromInt(1)))}, nil},
		{"host port with a negative surge", []func(*ReplicationController){hostPort, strategy(surge(intstr.FromInt(-1)))},
			[]string{ps + ".maxSurge: must not be negative, got -1"}},
		{"a surge without a host port", []func(*ReplicationController){strategy(surge(intstr.FromInt(1)))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validWeb()
			for _, m := range tt.mutate {
				m(rc)
			}
			got := fieldErrorStrings(t, Validate(rc, allowHostPorts))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestUpdateStrategyIsNotPartOfTheTemplateHash: monitorSeconds, like every
// strategy field, lives beside the template, so setting it outdates no
// container; left out, it is left out of the stored JSON.
func TestUpdateStrategyIsNotPartOfTheTemplateHash(t *testing.T) {
	for _, file := range []string{"controller-web.json", "controller-full.json"} {
		rc, err := Decode(readTestdata(t, file))
		if err != nil {
			t.Fatalf("Decode %s: %v", file, err)
		}
		before := TemplateHash(&rc.DesiredState.TaskTemplate)
		m, d := 30, 120
		rc.DesiredState.UpdateStrategy = &UpdateStrategy{MonitorSeconds: &m, ProgressDeadlineSeconds: &d}
		if after := TemplateHash(&rc.DesiredState.TaskTemplate); after != before {
			t.Errorf("%s: TemplateHash = %s with monitorSeconds, %s without", file, after, before)
		}
	}
	data, err := json.Marshal(UpdateStrategy{Type: RollingUpdate})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); got != `{"type":"RollingUpdate"}` {
		t.Errorf("an update strategy without monitorSeconds encodes as %s", got)
	}
}

func TestStrategyDefaultDeadlineOutlastsTheWait(t *testing.T) {
	for _, tt := range []struct{ minReady, want int }{{0, 600}, {299, 600}, {400, 800}} {
		ds := ReplicationControllerState{MinReadySeconds: tt.minReady}
		if got := *ds.Strategy().ProgressDeadlineSeconds; got != tt.want {
			t.Errorf("minReadySeconds %d: default deadline %d, want %d", tt.minReady, got, tt.want)
		}
	}
}
