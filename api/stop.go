package api

// This file holds what a container's stop is made of (docs/CONTRACT.md,
// Stopping): the stop signal, the grace period and the preStop hook, and
// their checks.

import (
	"fmt"
	"slices"
	"strings"
)

// MaxStopGracePeriodSeconds is the longest grace period a container may
// ask for (one hour).
const MaxStopGracePeriodSeconds = 3600

// DefaultStopSignal stops a container whose spec names no stopSignal.
const DefaultStopSignal = "SIGTERM"

// PreStop is what runs in or for a container before its stop signal, as
// Kubernetes' preStop hook. Exactly one field is set.
type PreStop struct {
	// Exec is a command run in the container (without a shell, as
	// command), through the engine's exec.
	Exec []string `json:"exec,omitempty"`
	// SleepSeconds is how long the manager waits before the stop signal,
	// 1 to MaxStopGracePeriodSeconds: time for a load balancer to stop
	// sending the container new work.
	SleepSeconds int `json:"sleepSeconds,omitempty"`
}

// String says what the hook does: "exec [cmd arg]" or "sleep 2s"; "" for
// nil.
func (p *PreStop) String() string {
	switch {
	case p == nil:
		return ""
	case len(p.Exec) > 0:
		return fmt.Sprintf("exec %q", p.Exec)
	}
	return fmt.Sprintf("sleep %ds", p.SleepSeconds)
}

// stopSignals are the signal names a stop signal may have: Linux's, as
// Docker knows them, less SIGSTOP, which cannot be caught and would only
// pause the container until it is killed.
var stopSignals = []string{
	"SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL",
	"SIGINT", "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR",
	"SIGQUIT", "SIGSEGV", "SIGSTKFLT", "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP",
	"SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH",
	"SIGXCPU", "SIGXFSZ",
}

// IsStopSignal reports whether name is a signal a container may be
// stopped with: a Linux signal name with its SIG prefix, in capitals.
func IsStopSignal(name string) bool {
	return slices.Contains(stopSignals, name)
}

// stop checks a container's stop signal, grace period and preStop; field
// is the container's path.
func (v *validator) stop(field string, c *Container) {
	if s := c.StopSignal; s != "" && !IsStopSignal(s) {
		hint := ""
		if up := "SIG" + strings.TrimPrefix(strings.ToUpper(s), "SIG"); IsStopSignal(up) {
			hint = fmt.Sprintf(" (did you mean %q?)", up)
		}
		v.add(field+".stopSignal", "unknown signal %q%s: a Linux signal name such as \"SIGTERM\" or \"SIGINT\"", shorten(s), hint)
	}
	if g := c.StopGracePeriodSeconds; g != nil && (*g < 0 || *g > MaxStopGracePeriodSeconds) {
		v.add(field+".stopGracePeriodSeconds", "must be between 0 and %d, got %d", MaxStopGracePeriodSeconds, *g)
	}
	p := c.PreStop
	if p == nil {
		return
	}
	f := field + ".preStop"
	switch {
	case len(p.Exec) > 0 && p.SleepSeconds != 0:
		v.add(f, "set exactly one of exec and sleepSeconds, got both")
	case len(p.Exec) == 0 && p.SleepSeconds == 0:
		v.add(f, `set exactly one of exec (["cmd", "arg"]) and sleepSeconds`)
	case p.SleepSeconds < 0 || p.SleepSeconds > MaxStopGracePeriodSeconds:
		v.add(f+".sleepSeconds", "must be between 1 and %d, got %d", MaxStopGracePeriodSeconds, p.SleepSeconds)
	}
	for i, arg := range p.Exec {
		if arg == "" {
			v.add(fmt.Sprintf("%s.exec[%d]", f, i), "must not be empty")
		}
	}
}
