package bench

// This file summarises samples, medians and nearest-rank percentiles, and
// prints them. It does no I/O.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Durations are the samples of one measurement, in the order taken.
type Durations []time.Duration

// Median is the middle sample, or the mean of the two middle ones; 0 for
// no samples.
func (d Durations) Median() time.Duration {
	s := slices.Sorted(slices.Values(d))
	switch n := len(s); {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100): the
// smallest sample that at least p% of the samples do not exceed. With 20
// samples p99 is the largest; with 200 it is the second largest. 0 for no
// samples.
func (d Durations) Percentile(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(d))))
	return slices.Sorted(slices.Values(d))[min(max(rank, 1), len(d))-1]
}

// MarshalJSON writes the samples as milliseconds with microsecond
// precision, which reads better in the raw results than nanoseconds.
func (d Durations) MarshalJSON() ([]byte, error) {
	ms := make([]float64, len(d))
	for i, v := range d {
		ms[i] = math.Round(float64(v)/float64(time.Microsecond)) / 1000
	}
	return json.Marshal(ms)
}

// ratio is a/b, or NaN when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// fmtDuration prints a duration with two or three significant digits in
// the unit that suits it: 612ns, 1.25µs, 812µs, 4.31ms, 1.25s.
func fmtDuration(d time.Duration) string {
	abs := d.Abs()
	switch {
	case abs < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case abs < 10*time.Microsecond:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	case abs < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case abs < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case abs < time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	case abs < 10*time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}

// spread prints the median of samples with their range.
func spread(d Durations) string {
	switch len(d) {
	case 0:
		return "no samples"
	case 1:
		return fmtDuration(d[0])
	}
	return fmt.Sprintf("median %s (min %s, max %s, n=%d)", fmtDuration(d.Median()), fmtDuration(slices.Min(d)), fmtDuration(slices.Max(d)), len(d))
}

func fmtRatio(r float64) string {
	if math.IsNaN(r) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", r)
}

// fmtCalls prints calls by operation, sorted by operation; an average per
// round may be a fraction.
func fmtCalls(calls map[string]float64) string {
	if len(calls) == 0 {
		return "none"
	}
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(calls)) {
		parts = append(parts, op+" "+strconv.FormatFloat(math.Round(calls[op]*10)/10, 'f', -1, 64))
	}
	return strings.Join(parts, ", ")
}
