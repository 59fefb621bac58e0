package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestStopWhenIsolatedCapsTheGraceBelowHalfTheLease(t *testing.T) {
	tests := []struct {
		lease, want time.Duration
	}{
		{15 * time.Second, 6 * time.Second}, // isolated after 7.5s, 6s and a second's margin fit in the other 7.5s
		{60 * time.Second, 29 * time.Second},
		{2 * time.Second, time.Nanosecond}, // the smallest lease: killed at once
	}
	for _, tt := range tests {
		opts := newOptions()
		opts.LeaderElectLeaseDuration = tt.lease
		if got := opts.maxStopGrace(); got != 0 {
			t.Errorf("lease %s without --stop-when-isolated: cap %s, want none", tt.lease, got)
		}
		opts.StopWhenIsolated = true
		got := opts.maxStopGrace()
		if got != tt.want {
			t.Errorf("lease %s: cap %s, want %s", tt.lease, got, tt.want)
		}
		if got > max(tt.lease/2-isolatedStopMargin, time.Nanosecond) {
			t.Errorf("lease %s: a stop of %s and its margin outlast the half lease left after the isolation", tt.lease, got)
		}
	}
}

func TestStopWhenIsolatedSaysSoAtTheStart(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	opts := newOptions()
	logStopGrace(logger, opts)
	if buf.Len() != 0 {
		t.Errorf("without --stop-when-isolated it logged %q", buf.String())
	}
	opts.StopWhenIsolated = true
	logStopGrace(logger, opts)
	for _, want := range []string{"caps every container's stop grace period", "maxGrace=6s", "lease=15s", "dockerStopTimeout=10s", "defaultCut=true"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the start log %q does not say %q", buf.String(), want)
		}
	}
}
