package bench

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func ms(v ...int) Durations {
	out := make(Durations, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name    string
		samples Durations
		want    time.Duration
	}{
		{"none", nil, 0},
		{"one", ms(7), 7 * time.Millisecond},
		{"odd, unsorted", ms(9, 1, 5), 5 * time.Millisecond},
		{"even: mean of the middle two", ms(4, 1, 3, 2), 2500 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.samples.Median(); got != tt.want {
				t.Errorf("Median(%v) = %v, want %v", tt.samples, got, tt.want)
			}
		})
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var hundred Durations
	for i := 100; i >= 1; i-- { // reversed: the order taken must not matter
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		name    string
		samples Durations
		p       float64
		want    time.Duration
	}{
		{"p50 of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p90 of 1..100", hundred, 90, 90 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 is the max", hundred, 100, 100 * time.Millisecond},
		{"p99 of 20 samples is the largest", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 99, 20 * time.Millisecond},
		{"p90 of 10 samples is the 9th", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 90, 9 * time.Millisecond},
		{"tiny p is the min", ms(3, 2, 1), 0.1, time.Millisecond},
		{"none", nil, 99, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.samples.Percentile(tt.p); got != tt.want {
				t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestPercentileDoesNotReorderSamples(t *testing.T) {
	d := ms(3, 1, 2)
	_ = d.Percentile(50)
	_ = d.Median()
	if !slices.Equal(d, ms(3, 1, 2)) {
		t.Errorf("samples reordered to %v", d)
	}
}

func TestDurationsAreMillisecondsInJSON(t *testing.T) {
	data, err := json.Marshal(Durations{1500 * time.Microsecond, 2 * time.Second, 0, 1234567})
	if got, want := string(data), "[1.5,2000,0,1.235]"; err != nil || got != want {
		t.Errorf("JSON = %s, %v; want %s", got, err, want)
	}
}

func TestFmtDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{612 * time.Nanosecond, "612ns"},
		{1250 * time.Nanosecond, "1.25µs"},
		{812 * time.Microsecond, "812µs"},
		{4310 * time.Microsecond, "4.31ms"},
		{250 * time.Millisecond, "250ms"},
		{1250 * time.Millisecond, "1.25s"},
		{61 * time.Second, "61.0s"},
	}
	for _, tt := range tests {
		if got := fmtDuration(tt.d); got != tt.want {
			t.Errorf("fmtDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
