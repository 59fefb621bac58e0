package ctlview_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/internal/ctlview"
)

func TestFormatLabelsSortsThePairs(t *testing.T) {
	if got := ctlview.FormatLabels(map[string]string{"tier": "front", "app": "web"}); got != "app=web,tier=front" {
		t.Errorf("FormatLabels = %q", got)
	}
	if got := ctlview.FormatLabels(nil); got != ctlview.None {
		t.Errorf("FormatLabels(nil) = %q, want %q", got, ctlview.None)
	}
}

func TestAgeAndFormatTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		ago  time.Duration
		want string
	}{{45 * time.Second, "45s"}, {190 * time.Second, "3m10s"}, {5 * time.Hour, "5h"}, {4 * 24 * time.Hour, "4d"}} {
		if got := ctlview.Age(now, now.Add(-tt.ago)); got != tt.want {
			t.Errorf("Age(%v ago) = %q, want %q", tt.ago, got, tt.want)
		}
	}
	if got := ctlview.Age(now, time.Time{}); got != ctlview.Unknown {
		t.Errorf("Age(zero) = %q, want %q", got, ctlview.Unknown)
	}
	local := now.Add(-45 * time.Second).In(time.FixedZone("CET", 3600))
	if got, want := ctlview.FormatTime(now, local), "2026-11-29T08:59:15Z (45s ago)"; got != want {
		t.Errorf("FormatTime = %q, want %q", got, want)
	}
	if got := ctlview.FormatTime(now, time.Time{}); got != ctlview.Unknown {
		t.Errorf("FormatTime(zero) = %q, want %q", got, ctlview.Unknown)
	}
}

func TestOrNoneAndImages(t *testing.T) {
	if ctlview.OrNone("") != ctlview.None || ctlview.OrNone("x") != "x" {
		t.Errorf("OrNone: %q, %q", ctlview.OrNone(""), ctlview.OrNone("x"))
	}
	rc := &api.ReplicationController{}
	if got := ctlview.Images(rc); got != ctlview.None {
		t.Errorf("Images of no container = %q, want %q", got, ctlview.None)
	}
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers = []api.Container{{Image: "demo:1"}, {Image: "side:2"}}
	if got := ctlview.Images(rc); got != "demo:1,side:2" {
		t.Errorf("Images = %q", got)
	}
}

func TestFormatPortAsDockerDoes(t *testing.T) {
	for _, tt := range []struct {
		port api.Port
		want string
	}{
		{api.Port{ContainerPort: 8080, Name: "http"}, "8080/TCP (http)"},
		{api.Port{ContainerPort: 53, Protocol: "udp", HostPort: 5353}, "5353->53/UDP"},
		{api.Port{ContainerPort: 80, HostPort: 8080, HostIP: "127.0.0.1"}, "127.0.0.1:8080->80/TCP"},
	} {
		if got := ctlview.FormatPort(tt.port); got != tt.want {
			t.Errorf("FormatPort(%+v) = %q, want %q", tt.port, got, tt.want)
		}
	}
}

func TestFormatCommandQuotesWhatAShellWouldSplit(t *testing.T) {
	got := ctlview.FormatCommand(api.Command{"/task", "--listen", ":8080", "a b", "", `say "hi"`})
	if want := `/task --listen :8080 "a b" "" "say \"hi\""`; got != want {
		t.Errorf("FormatCommand = %q, want %q", got, want)
	}
}

func TestFormatMemoryAndCPU(t *testing.T) {
	if got := ctlview.FormatMemory(64 << 20); got != "67108864 bytes (64MiB)" {
		t.Errorf("FormatMemory = %q", got)
	}
	if got := ctlview.FormatMemory(0); got != "<no limit>" {
		t.Errorf("FormatMemory(0) = %q", got)
	}
	if ctlview.FormatCPU(512) != "512" || ctlview.FormatCPU(0) != "<default>" {
		t.Errorf("FormatCPU: %q, %q", ctlview.FormatCPU(512), ctlview.FormatCPU(0))
	}
}

func TestFormatHealthCheck(t *testing.T) {
	for _, tt := range []struct {
		h    api.HealthCheck
		want string
	}{
		{api.HealthCheck{Test: api.Command{"/task", "-probe"}, Interval: api.Duration(5 * time.Second), Retries: 3}, "CMD /task -probe (interval 5s, retries 3)"},
		{api.HealthCheck{Test: api.Command{"NONE"}}, "disabled (NONE)"},
		{api.HealthCheck{Timeout: api.Duration(time.Second), StartPeriod: api.Duration(time.Minute)}, "<none> (timeout 1s, start period 1m0s)"},
	} {
		if got := ctlview.FormatHealthCheck(&tt.h); got != tt.want {
			t.Errorf("FormatHealthCheck(%+v) = %q, want %q", tt.h, got, tt.want)
		}
	}
}

func TestStrategyFields(t *testing.T) {
	deadline := 120
	ds := api.ReplicationControllerState{Paused: true, UpdateStrategy: &api.UpdateStrategy{ProgressDeadlineSeconds: &deadline}}
	want := [][2]string{
		{"Strategy:", "RollingUpdate (maxUnavailable 1, maxSurge 0)"},
		{"Progress deadline:", "120s"},
		{"Paused:", "true"},
	}
	if got := ctlview.StrategyFields(ds); !slices.Equal(got, want) {
		t.Errorf("StrategyFields = %q, want %q", got, want)
	}
	ds = api.ReplicationControllerState{UpdateStrategy: &api.UpdateStrategy{Type: api.OnDelete}}
	if got := ctlview.StrategyFields(ds); !slices.Equal(got, [][2]string{{"Strategy:", "OnDelete"}}) {
		t.Errorf("StrategyFields(OnDelete) = %q", got)
	}
}

func TestSecurityFieldsOnlyThoseSet(t *testing.T) {
	if got := ctlview.SecurityFields(api.Container{}); len(got) != 0 {
		t.Errorf("SecurityFields of a plain container = %q, want none", got)
	}
	ctr := api.Container{
		Privileged: true,
		HostPID:    true,
		Volumes:    []api.Volume{{HostPath: "/srv/data", ContainerPath: "/data", ReadOnly: true}, {HostPath: "/tmp", ContainerPath: "/scratch"}},
		Devices:    []api.Device{{HostPath: "/dev/fuse"}},
		CapAdd:     []string{"NET_ADMIN", "SYS_TIME"},
	}
	want := [][2]string{
		{"Privileged:", "true"},
		{"Host PID:", "true"},
		{"Host mounts:", "/srv/data -> /data (ro), /tmp -> /scratch (rw)"},
		{"Devices:", "/dev/fuse -> /dev/fuse (rwm)"},
		{"Capabilities added:", "NET_ADMIN,SYS_TIME"},
	}
	if got := ctlview.SecurityFields(ctr); !slices.Equal(got, want) {
		t.Errorf("SecurityFields = %q, want %q", got, want)
	}
}

func TestOneLine(t *testing.T) {
	err := errors.New("apply web.json: invalid:\n  desiredState.replicas: must be between 0 and 1000, got -1\n\n  id: required\n")
	if got, want := ctlview.OneLine(err), "apply web.json: invalid:; desiredState.replicas: must be between 0 and 1000, got -1; id: required"; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
	if got := ctlview.OneLineString("a\n  b\tc "); got != "a b c" {
		t.Errorf("OneLineString = %q", got)
	}
}

func TestSlotOrderPutsOddSlotsLast(t *testing.T) {
	for slot, want := range map[string]int{"0": 0, "10": 10, "": math.MaxInt, "-1": math.MaxInt, "x": math.MaxInt} {
		if got := ctlview.SlotOrder(slot); got != want {
			t.Errorf("SlotOrder(%q) = %d, want %d", slot, got, want)
		}
	}
}
