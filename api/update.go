package api

// This file holds the update strategy of DESIGN.md section 10: its
// fields, their defaults, their validation and how the bounds resolve
// against a replica count.

import (
	"fmt"
	"strings"

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
	if s.ProgressDeadlineSeconds == nil {
		d := DefaultProgressDeadlineSeconds
		s.ProgressDeadlineSeconds = &d
	}
	return s
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

// updateStrategy checks desiredState.updateStrategy.
func (v *validator) updateStrategy(ds *ReplicationControllerState) {
	const path = "desiredState.updateStrategy"
	s := ds.UpdateStrategy
	if s == nil {
		return
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
	if d := s.ProgressDeadlineSeconds; d != nil {
		switch {
		case *d < 1:
			v.add(path+".progressDeadlineSeconds", "must be at least 1, got %d", *d)
		case *d <= ds.MinReadySeconds:
			v.add(path+".progressDeadlineSeconds", "must be more than desiredState.minReadySeconds (%d), got %d", ds.MinReadySeconds, *d)
		}
	}
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
