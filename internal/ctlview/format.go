package ctlview

// The formats rcctl prints and the status page shows: labels, ages,
// ports, commands, health checks and the like, as a human reads them.
// They are made here only: the status page's JSON carries them as display
// strings, which its script places without formatting anything itself.
// Nothing here prints an environment value: they may be secrets.

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/replication-manager/replication-manager/api"
)

// Placeholders for a value that is absent, not known, or cannot be read.
const (
	// None stands for an empty value: no labels, no reason, no ports.
	None = "<none>"
	// Unknown stands for a time that is not known (a zero time).
	Unknown = "<unknown>"
	// Invalid stands for a field of a spec that does not decode.
	Invalid = "<invalid>"
)

// FormatLabels prints a label map as sorted k=v pairs joined by commas, or
// None.
func FormatLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return None
	}
	return api.FormatLabels(labels)
}

// Age prints how long before now t was, as kubectl's AGE column does (45s,
// 3m10s, 5h, 4d), or Unknown for a zero time.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return duration.HumanDuration(now.Sub(t))
}

// FormatTime prints a timestamp in UTC (RFC 3339) with how long before now
// it was, or Unknown for a zero time.
func FormatTime(now, t time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), Age(now, t))
}

// OrNone prints s, or None when it is empty.
func OrNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// Images lists the images of a controller's containers, joined by commas,
// or None.
func Images(rc *api.ReplicationController) string {
	var out []string
	for _, c := range rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers {
		out = append(out, c.Image)
	}
	return OrNone(strings.Join(out, ","))
}

// ImageIDs lists the images a status says the containers run, each as
// its short ID (the 12 hex digits `docker images` shows) and how many
// containers run it ("0123456789ab:2,fedcba987654:1"), or None.
func ImageIDs(st *api.ReplicationControllerStatus) string {
	if st == nil {
		return None
	}
	out := make([]string, len(st.Images))
	for i, im := range st.Images {
		out[i] = fmt.Sprintf("%s:%d", api.ShortImageID(im.ImageID), im.Containers)
	}
	return OrNone(strings.Join(out, ","))
}

// FormatPort prints a port as Docker does: [hostIP:]hostPort->containerPort/proto,
// or containerPort/proto when it is not published, followed by its name.
func FormatPort(p api.Port) string {
	proto := strings.ToUpper(p.Protocol)
	if proto == "" {
		proto = "TCP"
	}
	s := fmt.Sprintf("%d/%s", p.ContainerPort, proto)
	if p.HostPort != 0 {
		host := strconv.Itoa(p.HostPort)
		if p.HostIP != "" {
			host = p.HostIP + ":" + host
		}
		s = host + "->" + s
	}
	if p.Name != "" {
		s += " (" + p.Name + ")"
	}
	return s
}

// FormatCommand prints a command as a shell would take it: arguments that
// are empty or hold spaces, quotes or backslashes are quoted.
func FormatCommand(cmd []string) string {
	args := make([]string, len(cmd))
	for i, a := range cmd {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		args[i] = a
	}
	return strings.Join(args, " ")
}

// FormatMemory prints a memory limit in bytes and in a human unit, or
// <no limit> when it is not set.
func FormatMemory(bytes int64) string {
	if bytes == 0 {
		return "<no limit>"
	}
	return fmt.Sprintf("%d bytes (%s)", bytes, units.BytesSize(float64(bytes)))
}

// FormatCPU prints CPU shares, or <default> when they are not set.
func FormatCPU(shares int64) string {
	if shares == 0 {
		return "<default>"
	}
	return strconv.FormatInt(shares, 10)
}

// FormatHealthCheck prints a health check as Docker would run it, with the
// settings that are not left to the image or Docker's defaults.
func FormatHealthCheck(h *api.HealthCheck) string {
	if h.Disabled() {
		return "disabled (NONE)"
	}
	s := OrNone(FormatCommand(h.ExplicitTest()))
	var settings []string
	if h.Interval > 0 {
		settings = append(settings, "interval "+h.Interval.String())
	}
	if h.Timeout > 0 {
		settings = append(settings, "timeout "+h.Timeout.String())
	}
	if h.Retries > 0 {
		settings = append(settings, fmt.Sprintf("retries %d", h.Retries))
	}
	if h.StartPeriod > 0 {
		settings = append(settings, "start period "+h.StartPeriod.String())
	}
	if len(settings) > 0 {
		s += " (" + strings.Join(settings, ", ") + ")"
	}
	return s
}

// StrategyFields are the lines that show a desired state's update
// strategy, as label and value: the strategy with its defaults filled in,
// the progress deadline when the spec sets one, and whether the rollout is
// paused.
func StrategyFields(ds api.ReplicationControllerState) [][2]string {
	var out [][2]string
	strategy := ds.Strategy()
	if strategy.Type == api.RollingUpdate {
		out = append(out, [2]string{"Strategy:", fmt.Sprintf("%s (maxUnavailable %s, maxSurge %s)", strategy.Type, strategy.MaxUnavailable, strategy.MaxSurge)})
	} else {
		out = append(out, [2]string{"Strategy:", strategy.Type})
	}
	if ds.UpdateStrategy != nil && ds.UpdateStrategy.ProgressDeadlineSeconds != nil {
		out = append(out, [2]string{"Progress deadline:", fmt.Sprintf("%ds", *ds.UpdateStrategy.ProgressDeadlineSeconds)})
	}
	if ds.Paused {
		out = append(out, [2]string{"Paused:", "true"})
	}
	return out
}

// SecurityFields are the fields that weaken the container's isolation
// from the host, only those that are set, as label and value.
func SecurityFields(ctr api.Container) [][2]string {
	var out [][2]string
	for _, f := range []struct {
		label string
		set   bool
	}{
		{"Privileged:", ctr.Privileged},
		{"Host network:", ctr.HostNetwork},
		{"Host PID:", ctr.HostPID},
		{"Host IPC:", ctr.HostIPC},
	} {
		if f.set {
			out = append(out, [2]string{f.label, "true"})
		}
	}
	var volumes, devices []string
	for _, v := range ctr.Volumes {
		mode := "rw"
		if v.ReadOnly {
			mode = "ro"
		}
		volumes = append(volumes, fmt.Sprintf("%s -> %s (%s)", v.HostPath, v.ContainerPath, mode))
	}
	for _, d := range ctr.Devices {
		devices = append(devices, fmt.Sprintf("%s -> %s (%s)", d.HostPath, cmp.Or(d.ContainerPath, d.HostPath), cmp.Or(d.Permissions, "rwm")))
	}
	if len(volumes) > 0 {
		out = append(out, [2]string{"Host mounts:", strings.Join(volumes, ", ")})
	}
	if len(devices) > 0 {
		out = append(out, [2]string{"Devices:", strings.Join(devices, ", ")})
	}
	if len(ctr.CapAdd) > 0 {
		out = append(out, [2]string{"Capabilities added:", strings.Join(ctr.CapAdd, ",")})
	}
	return out
}

// OneLine folds a multi-line error into one line: its non-blank lines,
// trimmed, joined with "; ".
func OneLine(err error) string {
	var parts []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// OneLineString folds a multi-line message for a table cell: its words
// joined by single spaces.
func OneLineString(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// SlotOrder is the sort key of a container's slot label: its number, or
// math.MaxInt for a missing or odd slot, which sorts last.
func SlotOrder(slot string) int {
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 {
		return math.MaxInt
	}
	return n
}
