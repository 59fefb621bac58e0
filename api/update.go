package api

// This file holds the update strategy of docs/CONTRACT.md, Updates: its
// fields, their defaults, their validation and how the bounds resolve
// against a replica count.

import (
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Update strategy types.
const (
	// RollingUpdate replaces outdated containers within the bounds of
	// maxUnavailable and maxSurge, gated on availability (the default).
	RollingUpdate = "RollingUpdate"
	// OnDelete leaves running containers alone; only replacements get the
	// new template (the 2014 behaviour).
	OnDelete = "OnDelete"
)

// Defaults of the update strategy.
const (
	DefaultProgressDeadlineSeconds = 600
	DefaultMonitorSeconds          = 5
)

// Failure actions: what the leader does once a rollout has failed
// (updateStrategy.failureAction).
const (
	// FailurePause holds the rollout where it is (the default).
	FailurePause = "pause"
	// FailureRollback returns every slot to the last template whose
	// rollout completed, without writing the spec.
	FailureRollback = "rollback"
)

// Upper bounds of the fields counted in seconds, so that each converts to
// a time.Duration without overflow and means something a person could wait
// for.
const (
	// MaxMinReadySeconds is the largest desiredState.minReadySeconds: one
	// day.
	MaxMinReadySeconds = 86400
	// MaxMonitorSeconds is the largest
	// desiredState.updateStrategy.monitorSeconds: one day.
	MaxMonitorSeconds = 86400
	// MaxProgressDeadlineSeconds is the largest
	// desiredState.updateStrategy.progressDeadlineSeconds: 30 days.
	MaxProgressDeadlineSeconds = 30 * 86400
)

// DefaultMaxUnavailable and DefaultMaxSurge are the bounds of a rolling
// update that names none: one container at a time, never more than
// replicas, as in section 5.
var (
	DefaultMaxUnavailable = intstr.FromInt(1)
	DefaultMaxSurge       = intstr.FromInt(0)
)

// UpdateStrategy says how containers of an older template are replaced.
type UpdateStrategy struct {
	// Type is RollingUpdate (the default) or OnDelete.
	Type string `json:"type,omitempty"`
	// MaxUnavailable is how many replicas may be unavailable during a
	// rolling update: an integer, or a percentage of replicas ("25%")
	// rounded down. Default 1.
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxSurge is how many containers above replicas may run during a
	// rolling update: an integer, or a percentage of replicas rounded up.
	// Default 0.
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
	// ProgressDeadlineSeconds is how long a rollout may go without
	// progress before it is reported failed. Default 600.
	ProgressDeadlineSeconds *int `json:"progressDeadlineSeconds,omitempty"`
	// MonitorSeconds is how long a new container must have been running
	// and ready before it counts for the next step of a rolling update
	// (Swarm's update monitor); the step waits for the longer of it and
	// minReadySeconds (AvailableAfter). Default 5.
	MonitorSeconds *int `json:"monitorSeconds,omitempty"`
	// FailureAction is what a failed rollout does: FailurePause (the
	// default) or FailureRollback.
	FailureAction string `json:"failureAction,omitempty"`
	// MaxFailureRatio is the share of replicas whose new containers may
	// fail (exit, or turn unhealthy, within their monitor window) before
	// the rollout has failed: 0 to 1, default 0 (the first failure).
	MaxFailureRatio *float64 `json:"maxFailureRatio,omitempty"`
}

// Rollback reports whether a failed rollout rolls back.
func (s UpdateStrategy) Rollback() bool { return s.FailureAction == FailureRollback }

// FailureRatio is maxFailureRatio, 0 when not given.
func (s UpdateStrategy) FailureRatio() float64 {
	if s.MaxFailureRatio == nil {
		return 0
	}
	return *s.MaxFailureRatio
}

// Strategy returns the controller's update strategy with its defaults
// filled in. It does not modify ds.
func (ds *ReplicationControllerState) Strategy() UpdateStrategy {
	s := UpdateStrategy{}
	if ds.UpdateStrategy != nil {
		s = *ds.UpdateStrategy
	}
	if s.Type == "" {
		s.Type = RollingUpdate
	}
	if s.MaxUnavailable == nil {
		s.MaxUnavailable = &DefaultMaxUnavailable
	}
	if s.MaxSurge == nil {
		s.MaxSurge = &DefaultMaxSurge
	}
	if s.MonitorSeconds == nil {
		m := DefaultMonitorSeconds
		s.MonitorSeconds = &m
	}
	if s.ProgressDeadlineSeconds == nil {
		// 600, or twice the wait before a container counts when that is
		// longer, so that a spec that names no deadline can always make it
		d := max(DefaultProgressDeadlineSeconds, 2*max(ds.MinReadySeconds, *s.MonitorSeconds))
		s.ProgressDeadlineSeconds = &d
	}
	return s
}

// AvailableAfter is how long a new container must have been running and
// ready before it counts for the next step of a rollout: the longer of
// minReadySeconds and the strategy's monitorSeconds (default
// DefaultMonitorSeconds). Validate bounds both; on a spec it has not
// accepted, a negative value counts as 0 and the result saturates instead
// of overflowing.
func (ds *ReplicationControllerState) AvailableAfter() time.Duration {
	return seconds(max(ds.MinReadySeconds, *ds.Strategy().MonitorSeconds, 0))
}

// seconds converts n seconds to a time.Duration, saturating at the
// largest one.
func seconds(n int) time.Duration {
	if int64(n) > math.MaxInt64/int64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// Bounds resolves maxSurge (rounded up) and maxUnavailable (rounded down)
// against replicas, as Kubernetes does. When both resolve to 0 (a small
// percentage of few replicas), maxUnavailable becomes 1 so that a rollout
// can always move. Validate has checked both values.
func (s UpdateStrategy) Bounds(replicas int) (surge, unavailable int) {
	surge, _ = intstr.GetScaledValueFromIntOrPercent(s.MaxSurge, replicas, true)
	unavailable, _ = intstr.GetScaledValueFromIntOrPercent(s.MaxUnavailable, replicas, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

// updateStrategy checks desiredState.updateStrategy. Some rules hold for
// the defaults too (the progress deadline against AvailableAfter), so it
// runs without one.
func (v *validator) updateStrategy(ds *ReplicationControllerState) {
	const path = "desiredState.updateStrategy"
	s := ds.UpdateStrategy
	if s == nil {
		s = &UpdateStrategy{}
	}
	switch s.Type {
	case "", RollingUpdate, OnDelete:
	default:
		v.add(path+".type", "must be %s or %s, got %q", RollingUpdate, OnDelete, shorten(s.Type))
	}
	surge, surgeOK := v.intOrPercent(path+".maxSurge", s.MaxSurge)
	unavailable, unavailableOK := v.intOrPercent(path+".maxUnavailable", s.MaxUnavailable)
	if surgeOK && unavailableOK && isZero(surge, s.MaxSurge == nil, DefaultMaxSurge) && isZero(unavailable, s.MaxUnavailable == nil, DefaultMaxUnavailable) {
		v.add(path+".maxUnavailable", "may not be 0 when maxSurge is 0: the rollout could never move")
	}
	if surgeOK && (s.Type == "" || s.Type == RollingUpdate) && !isZero(surge, s.MaxSurge == nil, DefaultMaxSurge) {
		if port := hostPortField(&ds.TaskTemplate.DesiredState.Manifest); port != "" {
			v.add(path+".maxSurge", "must be 0 when a container publishes a host port (%s): the successor is started before the old container stops and could not bind it", port)
		}
	}
	monitorOK := true
	if m := s.MonitorSeconds; m != nil {
		switch {
		case *m < 0:
			v.add(path+".monitorSeconds", "must not be negative, got %d", *m)
			monitorOK = false
		case *m > MaxMonitorSeconds:
			v.add(path+".monitorSeconds", "must be at most %d (one day), got %d", MaxMonitorSeconds, *m)
			monitorOK = false
		}
	}
	switch s.FailureAction {
	case "", FailurePause, FailureRollback:
	default:
		v.add(path+".failureAction", "must be %s or %s, got %q", FailurePause, FailureRollback, shorten(s.FailureAction))
	}
	if r := s.MaxFailureRatio; r != nil && !(*r >= 0 && *r <= 1) {
		v.add(path+".maxFailureRatio", "must be between 0 and 1, got %v", *r)
	}
	minReadyOK := ds.MinReadySeconds >= 0 && ds.MinReadySeconds <= MaxMinReadySeconds // Validate reports it otherwise
	v.progressDeadline(path+".progressDeadlineSeconds", ds, s, minReadyOK && monitorOK)
}

// progressDeadline checks the progress deadline: its range when given, and
// that it, or its default, is more than the time a rollout step waits for
// a new container (AvailableAfter), which a rollout could otherwise never
// beat. The default is not checked under OnDelete, which has no rollout
// to time; a deadline given is. compare says whether minReadySeconds and
// monitorSeconds are valid enough to compare with.
func (v *validator) progressDeadline(field string, ds *ReplicationControllerState, s *UpdateStrategy, compare bool) {
	d := s.ProgressDeadlineSeconds
	if d != nil {
		switch {
		case *d < 1:
			v.add(field, "must be at least 1, got %d", *d)
			return
		case *d > MaxProgressDeadlineSeconds:
			v.add(field, "must be at most %d (30 days), got %d", MaxProgressDeadlineSeconds, *d)
			return
		}
	}
	if !compare {
		return
	}
	// wait names the longer of the two waits, as the spec gives it.
	wait, waitName := ds.MinReadySeconds, fmt.Sprintf("desiredState.minReadySeconds (%d)", ds.MinReadySeconds)
	switch m := s.MonitorSeconds; {
	case m == nil && DefaultMonitorSeconds > wait:
		wait, waitName = DefaultMonitorSeconds, fmt.Sprintf("desiredState.updateStrategy.monitorSeconds (%d by default)", DefaultMonitorSeconds)
	case m != nil && *m > wait:
		wait, waitName = *m, fmt.Sprintf("desiredState.updateStrategy.monitorSeconds (%d)", *m)
	}
	if d != nil && *d <= wait {
		v.add(field, "must be more than %s, got %d", waitName, *d)
	}
}

// hostPortField returns the field path of the first port in m that
// publishes a host port, or "" when none does.
func hostPortField(m *ContainerManifest) string {
	for i, c := range m.Containers {
		for j, p := range c.Ports {
			if p.HostPort > 0 {
				return fmt.Sprintf("%s[%d].ports[%d].hostPort", pathContainers, i, j)
			}
		}
	}
	return ""
}

// intOrPercent checks a bound: an integer of at least 0, or a percentage
// "N%" of 0 to 100. It returns the value as given and whether it is valid.
func (v *validator) intOrPercent(field string, x *intstr.IntOrString) (*intstr.IntOrString, bool) {
	if x == nil {
		return nil, true
	}
	if x.Type == intstr.Int {
		if x.IntVal < 0 {
			v.add(field, "must not be negative, got %d", x.IntVal)
			return x, false
		}
		return x, true
	}
	num, ok := strings.CutSuffix(x.StrVal, "%")
	var n int
	if _, err := fmt.Sscanf(num, "%d", &n); !ok || err != nil || fmt.Sprint(n) != num || n < 0 || n > 100 {
		v.add(field, "must be an integer or a percentage from 0%% to 100%%, got %q", shorten(x.StrVal))
		return x, false
	}
	return x, true
}

// isZero reports whether a bound is 0 as written (a default counts as its
// value).
func isZero(x *intstr.IntOrString, unset bool, def intstr.IntOrString) bool {
	if unset {
		x = &def
	}
	if x.Type == intstr.Int {
		return x.IntVal == 0
	}
	return x.StrVal == "0%"
}
