package bench

// This file summarises samples: medians and nearest-rank percentiles. It
// does no I/O.

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// Durations are the samples of one measurement, in the order taken.
type Durations []time.Duration

// sorted returns a sorted copy.
func (d Durations) sorted() []time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// Median is the middle sample, or the mean of the two middle ones; 0 for
// no samples.
func (d Durations) Median() time.Duration {
	s := d.sorted()
	n := len(s)
	switch {
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
	s := d.sorted()
	if len(s) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Max is the largest sample; 0 for no samples.
func (d Durations) Max() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return slices.Max(d)
}

// Min is the smallest sample; 0 for no samples.
func (d Durations) Min() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return slices.Min(d)
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

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Durations) UnmarshalJSON(data []byte) error {
	var ms []float64
	if err := json.Unmarshal(data, &ms); err != nil {
		return err
	}
	out := make(Durations, len(ms))
	for i, v := range ms {
		out[i] = time.Duration(math.Round(v * float64(time.Millisecond)))
	}
	*d = out
	return nil
}

// fmtDuration prints a duration with two or three significant digits in
// the unit that suits it: 612ns, 1.25µs, 812µs, 4.31ms, 1.25s.
func fmtDuration(d time.Duration) string {
	abs := d
	if abs < 0 {
		abs = -abs
	}
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

// ratio is a/b, or NaN when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
