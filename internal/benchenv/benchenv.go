// Package benchenv reads the RM_BENCH_* settings of the control plane's
// benchmarks (docs/BENCHMARKS.md) from the environment.
package benchenv

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Int reads a positive integer, def when unset.
func Int(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("%s: a positive integer, got %q", name, v)
	}
	return n
}

// Duration reads a duration of 0 or more, def when unset.
func Duration(tb testing.TB, name string, def time.Duration) time.Duration {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		tb.Fatalf("%s: a duration of 0 or more, got %q", name, v)
	}
	return d
}
